@testable import ParlorHTTP
import Testing

/// The inline pair of connection-cap keys that replaced a per-connection array: what goes in comes back, in order.
@Suite struct ConnectionCapKeysTests {
    static func keys(_ keys: ConnectionCapKeys) -> [String] {
        var out: [String] = []
        keys.forEach { out.append($0) }
        return out
    }

    @Test func keysComeBackInTheOrderTheyWereAdded() {
        var keys = ConnectionCapKeys()
        #expect(keys.isEmpty && Self.keys(keys).isEmpty)
        keys.append("proxy 127.0.0.1")
        #expect(!keys.isEmpty && Self.keys(keys) == ["proxy 127.0.0.1"])
        keys.append("203.0.113.7")
        #expect(Self.keys(keys) == ["proxy 127.0.0.1", "203.0.113.7"])
        var copy = keys
        copy = ConnectionCapKeys()
        #expect(copy.isEmpty && Self.keys(keys).count == 2, "a value: clearing a copy leaves the original")
    }
}
