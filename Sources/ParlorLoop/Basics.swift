// The time, lock and logging types every layer uses live in ParlorBasics, below the loop, so the rooms domain can
// use them without importing the loop; re-exported here so the loop's users keep seeing them through this module.
@_exported import ParlorBasics

extension EventLoop: SerialThread {
    public var isCurrent: Bool { inEventLoop }
}
