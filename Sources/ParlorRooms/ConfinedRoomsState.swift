import ParlorBasics

/// The live rooms and clients as a collaborator of the rooms service reaches them: reaching them off the rooms
/// thread is a bug, stopped in debug builds (`assert` is compiled out of release builds). Not Sendable: it is handed
/// only to types confined to the rooms thread.
struct ConfinedRoomsState {
    private let thread: any SerialThread
    private let state: RoomsState

    init(_ state: RoomsState, thread: any SerialThread) {
        self.thread = thread
        self.state = state
    }

    /// Stops a debug build when called off the rooms thread.
    @inline(__always)
    func assertOnRoomsThread(_ function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line) {
        assert(thread.isCurrent, "\(function) must run on the rooms thread", file: file, line: line)
    }

    @inline(__always)
    func get(_ function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line) -> RoomsState {
        assertOnRoomsThread(function, file: file, line: line)
        return state
    }
}
