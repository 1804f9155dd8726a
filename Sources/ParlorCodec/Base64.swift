/// Standard-alphabet base64 (RFC 4648 §4) with mandatory padding, as WebSocket handshakes use it.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Maps an ASCII byte to its 6-bit value; 0xFF marks bytes outside the alphabet.
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in alphabet.enumerated() {
            table[Int(byte)] = UInt8(value)
        }
        return table
    }()

    public static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            let b0 = UInt32(bytes[index])
            let b1 = remaining > 1 ? UInt32(bytes[index + 1]) : 0
            let b2 = remaining > 2 ? UInt32(bytes[index + 2]) : 0
            let group = b0 << 16 | b1 << 8 | b2
            output.append(alphabet[Int(group >> 18 & 0x3F)])
            output.append(alphabet[Int(group >> 12 & 0x3F)])
            output.append(remaining > 1 ? alphabet[Int(group >> 6 & 0x3F)] : UInt8(ascii: "="))
            output.append(remaining > 2 ? alphabet[Int(group & 0x3F)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The decoded bytes, or nil if `string` is not padded base64 (whitespace is not allowed either).
    public static func decode(_ string: String) -> [UInt8]? {
        decode(bytes: Array(string.utf8))
    }

    /// Standard base64 with padding, from its ASCII bytes.
    public static func decode(bytes input: [UInt8]) -> [UInt8]? {
        guard input.count % 4 == 0 else { return nil }
        let padding = input.reversed().prefix(while: { $0 == UInt8(ascii: "=") }).count
        guard padding <= 2 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count / 4 * 3)
        var index = 0
        while index < input.count {
            let isLastGroup = index + 4 == input.count
            let groupPadding = isLastGroup ? padding : 0
            var group: UInt32 = 0
            for offset in 0..<4 {
                let byte = input[index + offset]
                let value: UInt8
                if offset >= 4 - groupPadding {
                    value = 0
                } else {
                    value = decodeTable[Int(byte)]
                    guard value != 0xFF else { return nil }  // Also rejects "=" in the middle.
                }
                group = group << 6 | UInt32(value)
            }
            output.append(UInt8(truncatingIfNeeded: group >> 16))
            if groupPadding < 2 { output.append(UInt8(truncatingIfNeeded: group >> 8)) }
            if groupPadding < 1 { output.append(UInt8(truncatingIfNeeded: group)) }
            index += 4
        }
        return output
    }
}
