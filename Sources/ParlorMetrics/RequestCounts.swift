import ParlorLoop

/// The labels of parlor_requests_total: the route's pattern (never the raw path, whose ids would make a series per
/// room), the method and the status.
public struct RequestKey: Hashable, Sendable {
    public let route: String
    public let method: String
    public let status: Int

    public init(route: String, method: String, status: Int) {
        self.route = route
        self.method = Self.isKnownMethod(method) ? method : "other"
        self.status = status
    }

    /// Methods outside these are counted as `other`: a client must not be able to invent label values. A switch,
    /// not a `Set`: no hashing per request.
    static func isKnownMethod(_ method: String) -> Bool {
        switch method {
        case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS": true
        default: false
        }
    }
}

/// Requests counted by one loop thread, in a plain dictionary that only that thread touches: counting costs no lock
/// and no atomic. A scrape asks each loop for a copy (`ServerMetrics.collectRequests`). Runs of requests with the
/// same key (a client polling one route) are counted beside the dictionary and added to it when the key changes or
/// the counts are read, so most requests cost a comparison of their key, not a hash of its strings.
final class LoopRequestCounts: @unchecked Sendable {  // only touched on its loop's thread
    private var counted: [RequestKey: Int] = [:]
    private var run: (key: RequestKey, count: Int)?

    func record(_ key: RequestKey) {
        if let current = run, current.key == key {
            run = (key, current.count + 1)
            return
        }
        flushRun()
        run = (key, 1)
    }

    /// Every count so far.
    var counts: [RequestKey: Int] {
        flushRun()
        return counted
    }

    private func flushRun() {
        guard let current = run else { return }
        counted[current.key, default: 0] += current.count
        run = nil
    }
}
