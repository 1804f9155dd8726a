#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorPostgres
import ParlorStore
import PostgresTestCluster
import Testing

/// Issue 34, item 16: under podman-compose a stopping node hung giving up its lease, in a DNS lookup of the PostgreSQL
/// host that was going away (libpq's connect_timeout does not bound name lookup), until SIGKILL. Against the `parlor`
/// binary on a real PostgreSQL reached by a name only DNS knows: the node resolves it through a stub name server
/// (its own /etc/resolv.conf, bind-mounted in a mount namespace of its own), then the stub stops answering and the
/// node's sessions are ended, so every statement of the stop must connect again and look the name up: it hangs.
@Suite struct ShutdownDeadlineTests {
    static let stubAddress = "127.0.0.153"
    static let postgresName = "postgres.parlor-shutdown.test"

    @Test(.enabled(if: getuid() == 0, "binds port 53 and mounts over /etc/resolv.conf in a namespace: root only"))
    func stopEndsWithinTheShutdownTimeoutWhenTheDatabaseNameNoLongerResolves() throws {
        let postgres = try TestPostgres.shared()
        let url = try postgres.makeDatabase()
        let database = String(url.string.split(separator: "/").last ?? "")
        let stub = try DNSStub(address: Self.stubAddress)
        defer { stub.stop() }
        let resolvConf = NSTemporaryDirectory() + "parlor-resolv-\(UUID().uuidString).conf"
        // Long resolver timeouts, as a vanished name server costs: without a deadline of its own the stop waits them out.
        try "nameserver \(Self.stubAddress)\noptions timeout:30 attempts:2\n".write(toFile: resolvConf, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: resolvConf) }
        let named = url.string.replacingOccurrences(of: "@127.0.0.1:", with: "@\(Self.postgresName):")
        #expect(named != url.string)
        let timeout = 5.0  // the default; under load (make tsan beside other builds) the steps before the lease took over 2 s
        let namespace = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                         "mount --bind \(resolvConf) /etc/resolv.conf && exec \"$@\"", "sh"]
        let server = try ServerProcess(["--database", named, "--shutdown-timeout", "\(timeout)"], prefix: namespace)
        #expect(stub.queries.load(ordering: .relaxed) > 0, "the node found PostgreSQL through the stub")
        #expect(try RawConnection.oneRequest(server.port, "POST", "/rooms", json: #"{"display_name":"lease"}"#).status == 201)

        // From here every lookup hangs. The one that matters may start before SIGTERM (a reconnect after the
        // sessions end) or in the stop itself; either way the stop must not wait for it.
        let queriesBeforeHanging = stub.queries.load(ordering: .relaxed)
        stub.stopAnswering()
        let admin = try PostgresConnection(url: try postgres.url(database: "postgres"))
        defer { admin.close() }
        let ended = try admin.query("SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = $1",
                                    [.text(database)])
        #expect(!ended.isEmpty, "the node's sessions were ended")

        let start = Date()
        #expect(kill(server.pid, SIGTERM) == 0)
        let status = server.child.waitForExit(timeout: 20)
        let elapsed = Date().timeIntervalSince(start)
        #expect(status != nil, "still running 20 s after SIGTERM")
        #expect(elapsed <= timeout + 1.5, "SIGTERM to exit took \(elapsed) s with --shutdown-timeout \(timeout)")
        #expect(stub.queries.load(ordering: .relaxed) > queriesBeforeHanging, "the node looked the name up again (and hung there)")
        let log = server.child.errorOutput()
        #expect(log.contains("shutdown did not finish within"), "\(log)")
        #expect(log.contains("giving up the node lease"), "stuck in another step than the lease: \(log)")
    }
}
