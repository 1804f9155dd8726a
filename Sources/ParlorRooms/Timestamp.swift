import ParlorBasics

/// Wall-clock time as stored (Unix milliseconds) and as sent (ISO 8601 UTC with milliseconds).
public enum Timestamp {
    public static func nowMilliseconds() -> Int64 { WallClock.nowMilliseconds() }

    /// "2026-11-30T01:53:30.123Z", computed with the days-from-civil algorithm (no Foundation formatter per event).
    public static func iso8601(milliseconds: Int64) -> String {
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let millis = Int(milliseconds - seconds * 1000)
        var days = Int(seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400)
        let secondOfDay = Int(seconds - Int64(days) * 86400)
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let dayOfEra = days - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        guard (0...9999).contains(year) else {
            return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(millis, 3))Z"
        }
        // Every field has a fixed width here: the 24 bytes are written into one string, no temporaries (a join
        // into a room of n formats n of these).
        return String(unsafeUninitializedCapacity: 24) { buffer in
            func put(_ value: Int, _ width: Int, at offset: Int) {
                var rest = value
                for index in stride(from: offset + width - 1, through: offset, by: -1) {
                    buffer[index] = UInt8(truncatingIfNeeded: 0x30 + rest % 10)
                    rest /= 10
                }
            }
            put(year, 4, at: 0)
            buffer[4] = 0x2D  // -
            put(month, 2, at: 5)
            buffer[7] = 0x2D
            put(day, 2, at: 8)
            buffer[10] = 0x54  // T
            put(secondOfDay / 3600, 2, at: 11)
            buffer[13] = 0x3A  // :
            put(secondOfDay / 60 % 60, 2, at: 14)
            buffer[16] = 0x3A
            put(secondOfDay % 60, 2, at: 17)
            buffer[19] = 0x2E  // .
            put(millis, 3, at: 20)
            buffer[23] = 0x5A  // Z
            return 24
        }
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
