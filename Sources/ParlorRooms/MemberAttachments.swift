import ParlorBasics

/// A member's connections attaching and detaching, which a room's rules leave to here because with several nodes
/// the record of who is attached where is shared (ClusterSync+Attachments.swift): a member is away only when no
/// live node has a connection of it attached, and drops only then. On one node it is the member's own row.
/// Confined to the rooms thread (not Sendable), like the `RoomsState` it attaches connections in.
final class MemberAttachments {
    private let clusterSync: ClusterSync?
    private let timers: RoomTimers
    private let clock: any RoomsClock
    private let gracePeriod: TimeSpan
    private let confined: ConfinedRoomsState

    init(clusterSync: ClusterSync?, timers: RoomTimers, clock: any RoomsClock, gracePeriod: TimeSpan, state: ConfinedRoomsState) {
        self.clusterSync = clusterSync
        self.timers = timers
        self.clock = clock
        self.gracePeriod = gracePeriod
        confined = state
    }

    /// Attaches the connection to the room as the member's; with several nodes, records that this node has one.
    func attach(_ client: ClientRef, to room: LiveRoom, member memberID: String, _ step: inout Step) throws {
        try clusterSync?.recordAttachment(memberID: memberID, step.store)
        confined.get().attach(client, to: room)
    }

    /// The member's last connection here detached (closed): away since `time`, with its drop timer at the end of the
    /// grace period, unless another node still has a connection of it attached (it stays present, held there).
    func lastConnectionDetached(_ member: LiveMember, in room: LiveRoom, at time: Int64, _ step: inout Step) throws {
        confined.assertOnRoomsThread()
        var since = time
        if let clusterSync {
            guard let stored = try clusterSync.releaseAttachment(memberID: member.id, at: time, step.store) else {
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
        let graceMilliseconds = Int64(gracePeriod.seconds * 1000)
        timers.scheduleDrop(member.id, in: room, after: .milliseconds(Int(max(0, since + graceMilliseconds - clock.now()))))
    }

    /// Whether an away member may drop: with several nodes, only when no other node has it attached.
    func allowDrop(_ memberID: String, _ transaction: any RoomTransaction) throws -> Bool {
        try clusterSync?.allowsDrop(memberID, transaction) ?? true
    }
}
