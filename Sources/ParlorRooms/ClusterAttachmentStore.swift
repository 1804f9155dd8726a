/// Several nodes with connections of one member (a user in a room through WebSockets on two nodes): the record of
/// which nodes have one attached, so the member stays present while any of them does. The membership is held by
/// one node at a time (`ClusterTransaction.claimMembership`); when the holder's last connection of it closes, the
/// membership passes to another live node that has one attached, and only when none has is the member away (its
/// grace period, then one drop by the node holding it).
public protocol ClusterAttachmentTransaction: ClusterTransaction {
    /// Records that this node has a connection of the JOINED member attached (idempotent).
    func recordAttachment(memberID: String) throws
    /// This node's last connection of the member detached. When another live node still has one attached, the member
    /// stays present and is held by such a node (this one hands it over if it held it): returns nil. Otherwise this
    /// node holds it from now on, away since `time` (or since it already was): returns since when.
    func releaseAttachment(memberID: String, at time: Int64) throws -> Int64?
}
