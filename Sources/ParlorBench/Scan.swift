/// Byte-level lookups in the server's compact JSON: no allocation per message.
enum Scan {
    static let typeKey = Array("\"type\":\"".utf8)
    static let nameKey = Array("\"name\":\"".utf8)
    static let codeKey = Array("\"code\":\"".utf8)
    static let memberPrefix = Array("member:".utf8)
    static let memberJoined = Array("member:joined".utf8)
    static let sessionSuccess = Array("session:success".utf8)
    static let joinSuccess = Array("conversation:join:success".utf8)
    static let leaveSuccess = Array("conversation:leave:success".utf8)

    /// The range of the string value that follows `key` (which includes the opening quote).
    static func value(of key: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from start: Int = 0) -> Range<Int>? {
        let count = bytes.count, keyCount = key.count
        guard keyCount > 0, count >= keyCount else { return nil }
        var index = start
        let first = key[0]
        while index <= count - keyCount {
            if bytes[index] == first {
                var matched = true
                for offset in 1..<keyCount where bytes[index + offset] != key[offset] {
                    matched = false
                    break
                }
                if matched {
                    let valueStart = index + keyCount
                    var end = valueStart
                    while end < count, bytes[end] != 0x22 { end += 1 }
                    return valueStart..<end
                }
            }
            index += 1
        }
        return nil
    }

    static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ expected: [UInt8]) -> Bool {
        guard range.count == expected.count else { return false }
        for (offset, byte) in expected.enumerated() where bytes[range.lowerBound + offset] != byte { return false }
        return true
    }

    static func hasPrefix(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ prefix: [UInt8]) -> Bool {
        guard range.count >= prefix.count else { return false }
        for (offset, byte) in prefix.enumerated() where bytes[range.lowerBound + offset] != byte { return false }
        return true
    }

    /// The decimal number at the end of the value (user names are "<prefix><index>").
    static func trailingNumber(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        var value = 0, multiplier = 1, index = range.upperBound - 1
        while index >= range.lowerBound, bytes[index] >= 0x30, bytes[index] <= 0x39 {
            value += Int(bytes[index] - 0x30) * multiplier
            multiplier *= 10
            index -= 1
        }
        return index == range.upperBound - 1 ? nil : value
    }
}

extension Scan {
    static let memberIDKey = Array("\"member_id\":\"".utf8)
    static let roleKey = Array("\"role\":\"".utf8)
    static let memberLeft = Array("member:left".utf8)
    static let memberRole = Array("member:role".utf8)
    static let roomPrefix = Array("room:".utf8)
    static let speakingOn = Array("audio:speaking:on".utf8)
    static let speakingOff = Array("audio:speaking:off".utf8)
    static let errorInfix = Array(":error".utf8)
    static let presenceKey = Array("\"presence\":\"".utf8)
    static let modeKey = Array("\"mode\":\"".utf8)
    static let summary = Array("summary".utf8)
    static let roomPresence = Array("room:presence".utf8)

    /// Whether `infix` occurs inside the value at `range`.
    static func contains(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ infix: [UInt8]) -> Bool {
        guard range.count >= infix.count else { return false }
        for start in range.lowerBound...(range.upperBound - infix.count)
        where Scan.equal(bytes, start..<(start + infix.count), infix) { return true }
        return false
    }
}
