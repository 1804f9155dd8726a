import ParlorLoop

/// The labels of parlor_requests_total: the route's pattern (never the raw path, whose ids would make a series per
/// room), the method and the status.
public struct RequestKey: Hashable, Sendable {
    public let route: String
    public let method: String
    public let status: Int

    /// Methods outside this set are counted as `other`: a client must not be able to invent label values.
    static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    public init(route: String, method: String, status: Int) {
        self.route = route
        self.method = Self.knownMethods.contains(method) ? method : "other"
        self.status = status
    }
}

/// Requests counted by one loop thread, in a plain dictionary that only that thread touches: counting costs no lock
/// and no atomic. A scrape asks each loop for a copy (`ServerMetrics.collectRequests`).
final class LoopRequestCounts: @unchecked Sendable {  // `counts` is only touched on its loop's thread
    var counts: [RequestKey: Int] = [:]
}
