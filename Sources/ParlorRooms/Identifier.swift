/// Opaque, unguessable ids: a type prefix and 128 random bits from the system CSPRNG (getrandom on Linux).
public enum Identifier {
    public static func make(_ prefix: String) -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        return "\(prefix)-\(hex(high))\(hex(low))"
    }

    public static let user = "USR", room = "RM", member = "MEM", session = "SES", token = "TOK", node = "NODE"

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
