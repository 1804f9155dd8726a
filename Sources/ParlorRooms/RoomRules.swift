import ParlorBasics
import ParlorMetrics

/// What a room's rules need from the server, the same for every command: each command's `Step` carries it, and so
/// each `RoomContext` (RoomContext+Membership.swift and the other rules). One per `RoomsService`; used on the rooms
/// thread only (`state` asserts so in debug builds, and the clock's timers fire there), so it is not Sendable.
final class RoomRules {
    let configuration: RoomsConfiguration
    /// Wall-clock time (the rooms thread's, or a test's manual clock).
    let clock: any RoomsClock
    /// Where refusals are counted.
    let metrics: ServerMetrics
    let logger: Logger
    let addressLimits: AddressLimits
    /// The grace-period and ttl timers of the rooms.
    let timers: RoomTimers
    /// What the cluster and media parts decide for a room's rules (RoomSeams.swift).
    unowned let seams: any RoomSeams
    private let confined: ConfinedRoomsState

    init(configuration: RoomsConfiguration, clock: any RoomsClock, metrics: ServerMetrics, logger: Logger,
         state: ConfinedRoomsState, timers: RoomTimers, seams: any RoomSeams) {
        self.configuration = configuration
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
        addressLimits = AddressLimits(configuration, metrics: metrics)
        confined = state
        self.timers = timers
        self.seams = seams
    }

    /// The live rooms and clients: reaching them off the rooms thread is a bug, stopped in debug builds.
    var state: RoomsState { confined.get() }
}
