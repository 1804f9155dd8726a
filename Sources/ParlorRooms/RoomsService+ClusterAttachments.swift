import ParlorBasics

/// A member's connections on several nodes (ClusterAttachmentStore.swift): each node records when it attaches one,
/// and when its last one detaches the member is away only if no other live node has one attached.
extension RoomsService {
    /// Attaches the connection to the room as the member's; with several nodes, records that this node has one.
    func attach(_ client: ClientRef, to room: LiveRoom, member memberID: String, _ step: inout Step) throws {
        assertOnRoomsThread()
        if cluster != nil, let transaction = step.store as? any ClusterAttachmentTransaction {
            try transaction.recordAttachment(memberID: memberID)
        }
        state.attach(client, to: room)
    }

    /// The member's last connection here detached (closed): away since `time`, with its drop timer at the end of the
    /// grace period, unless another node still has a connection of it attached (it stays present, held there).
    func lastConnectionDetached(_ member: LiveMember, in room: LiveRoom, at time: Int64, _ step: inout Step) throws {
        assertOnRoomsThread()
        var since = time
        if cluster != nil, let transaction = step.store as? any ClusterAttachmentTransaction {
            guard let stored = try transaction.releaseAttachment(memberID: member.id, at: time) else {
                // Present on another node: nothing is due here.
                if let timer = room.member(member.id)?.dropTimer { clock.cancel(timer) }
                room.update(member.id) {
                    $0.disconnectedAt = nil
                    $0.dropTimer = nil
                }
                return
            }
            since = stored
        } else {
            try step.store.setDisconnected(memberID: member.id, since: time)
        }
        room.update(member.id) { $0.disconnectedAt = since }
        let graceMilliseconds = Int64(configuration.gracePeriod.seconds * 1000)
        rules.timers.scheduleDrop(member.id, in: room, after: .milliseconds(Int(max(0, since + graceMilliseconds - clock.now()))))
    }
}
