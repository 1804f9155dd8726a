#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorApp
import ParlorPostgres
import PostgresTestCluster
import Testing

/// Three nodes behind nginx as a WebSocket load balancer (Debian's nginx, `make test-deps`), as
/// docker/compose.scale.yml deploys them: clients reach "any node" through one address.
@Suite struct ClusterBalancerTests {
    @Test func clientsSpreadByNginxShareARoomAndThoseOfAStoppedNodeResumeOnAnother() throws {
        let url = try TestPostgres.shared().makeDatabase()
        var nodes: [ParlorApplication] = []
        defer { nodes.forEach { $0.shutdown() } }
        for _ in 0..<3 {
            var configuration = AppConfiguration.testing()
            configuration.databasePath = url.string
            configuration.jwtSecret = nil
            configuration.dataDirectory = NSTemporaryDirectory() + "/parlor-unused-\(UUID().uuidString)"
            configuration.rooms.nodeLease = .seconds(3)
            configuration.rooms.gracePeriod = .seconds(30)
            nodes.append(try buildApplication(configuration))
        }
        let balancer = try Nginx(upstreams: nodes.map(\.port))
        defer { balancer.stop() }
        let port = balancer.port

        let created = try RawConnection.oneRequest(port, "POST", "/rooms", json: #"{"display_name":"Balanced"}"#, headers: [:])
        let room = try #require(created.object["id"] as? String)
        var grants: [AuthGrant] = []
        var clients: [TestWebSocket] = []
        for index in 0..<6 {
            let grant = try auth(port: port, name: "user\(index)")
            let client = try TestWebSocket(port: port, token: grant.jwt, timeout: 15)
            _ = try client.join(room)
            grants.append(grant)
            clients.append(client)
        }
        let admin = try PostgresConnection(url: url)
        let holders = try admin.query("SELECT DISTINCT node_id FROM members WHERE room_id = $1 AND state = 'JOINED'", [.text(room)])
        #expect(holders.count == 3, "nginx spread the six WebSockets over the three nodes")
        // Everyone saw every later join, with the same ids, wherever their node.
        for (index, client) in clients.enumerated() {
            let last = try #require(clients[5].lastJoinReplyMember(room))
            _ = try client.event("member:joined", in: room, member: last)
            #expect(client.eventIDs[room] == Array((index + 1)...6))
        }

        // One node stops; its clients come back through nginx, which sends them to the others, and resume.
        nodes.removeFirst().shutdown()
        var resumedCount = 0
        for (index, client) in clients.enumerated() {
            guard (try? client.call("session:ping")) == nil else { continue }  // still connected: not on the stopped node
            let back = try TestWebSocket(port: port, token: grants[index].jwt, timeout: 15)
            let reply = try back.call("session:resume", ["session_id": client.sessionID, "last_event_ids": [room: 6]])
            #expect((reply["resumed"] as? [[String: Any]])?.compactMap { $0["cid"] as? String } == [room])
            clients[index] = back
            resumedCount += 1
        }
        #expect(resumedCount >= 1, "the stopped node held some of the six")

        // A newcomer's join reaches all six, with one id, and nobody left.
        let newcomer = try TestWebSocket(port: port, token: try auth(port: port, name: "newcomer").jwt, timeout: 15)
        let newcomerMember = try #require(try newcomer.join(room)["member_id"] as? String)
        for client in clients {
            #expect(try client.event("member:joined", in: room, member: newcomerMember)["id"] as? Int == 7)
        }
        let types = try admin.query("SELECT type FROM events WHERE room_id = $1 ORDER BY seq", [.text(room)]).compactMap { $0.string("type") }
        #expect(types == Array(repeating: "member:joined", count: 7))
    }
}

/// nginx as a child process on a free loopback port, balancing HTTP and WebSockets over `upstreams`
/// (the directives of docker/nginx/parlor-scale.conf), with everything it writes in a temporary directory.
final class Nginx {
    let port: Int
    private let process = Process()
    private let directory: String

    init(upstreams: [Int]) throws {
        guard let binary = ["/usr/sbin/nginx", "/usr/bin/nginx"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw TestFailure("nginx is not installed (make test-deps installs nginx-light)")
        }
        directory = NSTemporaryDirectory() + "parlor-nginx-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/tmp", withIntermediateDirectories: true)
        port = try TestPostgres.freePort()
        let servers = upstreams.map { "server 127.0.0.1:\($0) max_fails=1 fail_timeout=10s;" }.joined(separator: "\n        ")
        let temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map { "\($0)_temp_path \(directory)/tmp/\($0);" }.joined(separator: "\n    ")
        let configuration = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(directory)/nginx.pid;
            error_log \(directory)/error.log warn;
            events { worker_connections 256; }
            http {
                access_log off;
                \(temp)
                upstream parlor {
                    least_conn;
                    \(servers)
                }
                map $http_upgrade $connection_upgrade { default upgrade; '' close; }
                server {
                    listen 127.0.0.1:\(port);
                    location / {
                        proxy_pass http://parlor;
                        proxy_http_version 1.1;
                        proxy_set_header Upgrade $http_upgrade;
                        proxy_set_header Connection $connection_upgrade;
                        proxy_set_header Host $host;
                        proxy_read_timeout 1h;
                        proxy_next_upstream error timeout;
                    }
                }
            }
            """
        try configuration.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-p", directory, "-c", directory + "/nginx.conf"]
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Ready when it accepts a connection (it has no other signal of readiness).
        let deadline = Date().addingTimeInterval(10)
        while (try? RawConnection(port: port)) == nil {
            guard Date() < deadline, process.isRunning else {
                let log = (try? String(contentsOfFile: directory + "/error.log", encoding: .utf8)) ?? ""
                stop()
                throw TestFailure("nginx did not start: \(log)")
            }
            usleep(20_000)
        }
    }

    func stop() {
        // SIGKILL: with WebSockets open through it, nginx's own shutdown may wait on them.
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}
