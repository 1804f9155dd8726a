import ParlorBasics

/// The rooms' timers: a member's grace period (then it drops if still away) and an empty room's ttl (then it
/// closes). A timer only queues a command (`due`), applied in a batch like any other, which checks again whether
/// it is still due. Confined to the rooms thread (the clock's timers fire there), so it is not Sendable.
final class RoomTimers {
    private let clock: any RoomsClock
    /// Queues the command a timer is for; set once by the service before its thread starts.
    var due: (RoomsService.Command) -> Void = { _ in }

    init(clock: any RoomsClock) { self.clock = clock }

    /// Arms (or re-arms) the member's drop at the end of its grace period.
    func scheduleDrop(_ memberID: String, in room: LiveRoom, after delay: TimeSpan) {
        if let old = room.member(memberID)?.dropTimer { clock.cancel(old) }
        let roomID = room.id
        let timer = clock.schedule(after: delay) { [weak self] in
            self?.due(.dropIfStillAway(roomID: roomID, memberID: memberID))
        }
        room.update(memberID) { $0.dropTimer = timer }
    }

    /// Arms the timer that closes an empty room once it has been empty for its ttl.
    func scheduleExpiry(of room: LiveRoom) {
        guard let emptySince = room.emptySince else { return }
        if let timer = room.ttlTimer { clock.cancel(timer) }
        let dueAt = emptySince + room.ttl * 1000
        let delay = max(0, dueAt - clock.now())
        let roomID = room.id
        room.ttlTimer = clock.schedule(after: .milliseconds(Int(delay))) { [weak self] in
            self?.due(.closeIfExpired(roomID: roomID))
        }
    }

    /// Arms the timer that sends the room's next room:audience (RoomContext+Audience.swift).
    func scheduleAudienceUpdate(of room: LiveRoom, after delay: TimeSpan) {
        let roomID = room.id
        room.presence.timer = clock.schedule(after: delay) { [weak self] in
            self?.due(.sendAudience(roomID: roomID))
        }
    }

    /// Arms the timer that sends the room's throttled room:stream (RoomsService+LiveStream.swift).
    func scheduleStreamStatus(of room: LiveRoom, after delay: TimeSpan) {
        let roomID = room.id
        room.stream.timer = clock.schedule(after: delay) { [weak self] in
            self?.due(.sendStreamStatus(roomID: roomID))
        }
    }

    func cancel(_ timer: RoomsTimer) { clock.cancel(timer) }
}
