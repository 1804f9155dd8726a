import Synchronization

/// One counter or gauge any thread may change: an atomic, so recording costs no lock. A class, because `Atomic`
/// cannot be copied into arrays or dictionaries.
public final class MetricCell: Sendable {
    private let value = Atomic<Int>(0)

    public init() {}

    public func add(_ amount: Int = 1) { value.add(amount, ordering: .relaxed) }
    public func subtract(_ amount: Int = 1) { value.subtract(amount, ordering: .relaxed) }
    /// For gauges whose owner knows the whole value (the rooms thread after each batch).
    public func set(_ newValue: Int) { value.store(newValue, ordering: .relaxed) }
    public func load() -> Int { value.load(ordering: .relaxed) }
}
