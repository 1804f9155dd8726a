/// A member's connections on several nodes (ClusterAttachmentStore.swift): each node records when it attaches one,
/// and when its last one detaches the member is away only if no other live node has one attached.
extension ClusterSync {
    /// Records that this node has a connection of the member attached.
    func recordAttachment(memberID: String, _ transaction: any RoomTransaction) throws {
        rules.assertOnRoomsThread()
        try (transaction as? any ClusterAttachmentTransaction)?.recordAttachment(memberID: memberID)
    }

    /// This node's last connection of the member detached at `time`: nil when another live node still has one
    /// attached (the member stays present, held there); otherwise since when the member is away, as stored.
    func releaseAttachment(memberID: String, at time: Int64, _ transaction: any RoomTransaction) throws -> Int64? {
        rules.assertOnRoomsThread()
        guard let transaction = transaction as? any ClusterAttachmentTransaction else {
            try transaction.setDisconnected(memberID: memberID, since: time)
            return time
        }
        return try transaction.releaseAttachment(memberID: memberID, at: time)
    }
}
