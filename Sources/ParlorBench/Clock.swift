import ParlorLoop

/// The loop's monotonic clock as signed nanoseconds: the generator subtracts times and compares them across threads.
enum Clock {
    static func now() -> Int64 { Int64(MonotonicClock.now()) }
}
