import ParlorBasics

/// WebRTC signalling (`rtc:*`) across nodes: a message for a member with no connection on the sender's node is stored
/// in `signals` for the node holding the member (an SDP may exceed NOTIFY's 8,000 bytes), which delivers it and
/// deletes the row in one batch.
extension ClusterSync {
    /// Signalling messages other nodes stored for members held here: each goes to the member's connections here, and
    /// its row is deleted in this batch (kept if the batch does not commit). A member no longer here gets nothing.
    func deliverSignals(_ transaction: any ClusterTransaction, _ batch: inout Batch) throws {
        for signal in try transaction.withSavepoint({ try transaction.takeSignals() }) {
            guard let room = rules.state.rooms[signal.roomID], let member = room.member(signal.memberID) else { continue }
            for clientID in room.connections(of: member.user.id) { batch.outbox.send(signal.message, to: clientID) }
        }
    }
}
