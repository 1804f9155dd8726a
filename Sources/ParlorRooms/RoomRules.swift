import ParlorBasics
import ParlorMetrics

/// What a room's rules need from the server, the same for every command: each command's `Step` carries it, and so
/// each `RoomContext` (RoomContext+Chat.swift and the other rules). One per `RoomsService`, built at its start and
/// never changed; used on the rooms thread only (the clock's timers fire there), so it is not Sendable.
final class RoomRules {
    let configuration: RoomsConfiguration
    /// Wall-clock time and timers (the rooms thread's, or a test's manual clock).
    let clock: any RoomsClock
    /// Where refusals are counted.
    let metrics: ServerMetrics
    let addressLimits: AddressLimits

    init(configuration: RoomsConfiguration, clock: any RoomsClock, metrics: ServerMetrics) {
        self.configuration = configuration
        self.clock = clock
        self.metrics = metrics
        addressLimits = AddressLimits(configuration, metrics: metrics)
    }
}
