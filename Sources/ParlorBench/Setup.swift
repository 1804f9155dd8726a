import Foundation

/// The unmeasured part of a run: a token for every client and the rooms they join, over blocking keep-alive HTTP.
enum Setup {
    /// POST /auth for every client, on a few keep-alive connections in parallel.
    static func authenticate(_ options: Options, namePrefix: String) -> [String] {
        let tokens = SetupResults(count: options.clients)
        let group = DispatchGroup()
        let threadCount = min(options.setupThreads, options.clients)
        for thread in 0..<threadCount {
            group.enter()
            Thread {
                let endpoint = options.endpoints[thread % options.endpoints.count]  // spread over the nodes
                let client = SetupClient(host: endpoint.host, port: endpoint.port)
                var index = thread
                while index < options.clients {
                    let body = "{\"name\":\"\(namePrefix)\(index)\"}"
                    if let response = client.request("POST", "/auth", body: body), response.status == 200,
                       let token = JSONScan.string("jwt", in: response.text) {
                        tokens.set(index, token)
                    } else {
                        tokens.fail()
                    }
                    index += threadCount
                }
                group.leave()
            }.start()
        }
        group.wait()
        if tokens.failures > 0 { die("\(tokens.failures) of \(options.clients) POST /auth requests failed") }
        return tokens.values
    }

    /// POST /rooms, each room by a different client in turn (the server limits the rooms one user may create).
    static func createRooms(_ options: Options, tokens: [String], runTag: String) -> [String] {
        let client = SetupClient(host: options.host, port: options.port)
        var ids: [String] = []
        for index in 0..<options.rooms {
            let token = tokens[index % tokens.count]
            let body = "{\"display_name\":\"bench \(runTag) \(index)\",\"properties\":{\"ttl\":3600}}"
            guard let response = client.request("POST", "/rooms", body: body, bearer: token), response.status == 201,
                  let id = JSONScan.string("id", in: response.text) else {
                let response = client.request("POST", "/rooms", body: body, bearer: token)
                die("POST /rooms failed: \(response.map { "\($0.status) \($0.text)" } ?? "no response")")
            }
            ids.append(id)
        }
        return ids
    }
}

final class SetupResults: @unchecked Sendable {  // each index is written by one thread; counts behind the lock
    private let lock = NSLock()
    private var storage: [String]
    private var failed = 0

    init(count: Int) { storage = Array(repeating: "", count: count) }
    func set(_ index: Int, _ value: String) { lock.lock(); storage[index] = value; lock.unlock() }
    func fail() { lock.lock(); failed += 1; lock.unlock() }
    var values: [String] { lock.lock(); defer { lock.unlock() }; return storage }
    var failures: Int { lock.lock(); defer { lock.unlock() }; return failed }
}
