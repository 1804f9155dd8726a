import ParlorProtocol

/// What catching rooms up asks of the rooms service: closing a revoked user's connections, the same operation as
/// an admin's (`Operation.disconnectUser`). The service conforms with its `run`; `ClusterSync` holds it unowned, as
/// the service owns the `ClusterSync`.
protocol ClusterOperations: AnyObject {
    func run(_ operation: Operation, _ step: inout Step) throws -> JSONValue
}

/// The media homes (MediaSessions+Home.swift, MediaHomes.swift) as the cluster's signals reach them: this node's
/// media address registered at start, the homes of nodes whose lease ended released, a relayed media message handled.
protocol ClusterMediaHomes: AnyObject {
    func registerMediaAddress(_ transaction: any ClusterTransaction) throws
    func releaseMediaHomes(_ transaction: any ClusterTransaction, _ batch: inout Batch) throws
    func handleMediaHome(_ signal: MediaHomeSignal, _ transaction: any ClusterTransaction, _ batch: inout Batch) throws
}

extension RoomsService: ClusterOperations {}
