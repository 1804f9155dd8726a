import ParlorBasics
import ParlorMetrics
import ParlorProtocol

/// What a room's rules need from the server, the same for every command: each command's `Step` carries it, and so
/// each `RoomContext` (RoomContext+Membership.swift and the other rules). One per `RoomsService`; used on the rooms
/// thread only (`state` asserts so in debug builds, and the clock's timers fire there), so it is not Sendable.
final class RoomRules {
    let configuration: RoomsConfiguration
    /// Wall-clock time (the rooms thread's, or a test's manual clock).
    let clock: any RoomsClock
    let logger: Logger
    /// What the rules count as they go (room:audience deliveries); the rest is counted after each batch.
    let metrics: ServerMetrics
    /// The per-address caps and rates (refusals counted in the metrics).
    let addressLimits: AddressLimits
    /// The grace-period and ttl timers of the rooms.
    let timers: RoomTimers
    /// Connections attaching and detaching, recorded across nodes when there are several (MemberAttachments.swift).
    let attachments: MemberAttachments
    /// session:success's `media`: the mode, and the slots with a forwarding unit (`MediaSessions.json`).
    let mediaJSON: JSONValue
    /// The recording engine and this node's name for the recordings' rows (RoomRecordings.swift).
    let recordings: RoomRecordings
    private let confined: ConfinedRoomsState

    init(configuration: RoomsConfiguration, clock: any RoomsClock, metrics: ServerMetrics, logger: Logger,
         state: ConfinedRoomsState, timers: RoomTimers, attachments: MemberAttachments, mediaJSON: JSONValue) {
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
        addressLimits = AddressLimits(configuration, metrics: metrics)
        confined = state
        self.timers = timers
        self.attachments = attachments
        self.mediaJSON = mediaJSON
        recordings = RoomRecordings(configuration: configuration, mediaMode: mediaJSON["mode"]?.stringValue)
    }

    /// The live rooms and clients: reaching them off the rooms thread is a bug, stopped in debug builds.
    var state: RoomsState { confined.get() }

    /// Stops a debug build when called off the rooms thread; `assert` is compiled out of release builds.
    @inline(__always)
    func assertOnRoomsThread(_ function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line) {
        confined.assertOnRoomsThread(function, file: file, line: line)
    }
}
