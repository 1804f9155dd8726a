/// IMF-fixdate formatting for the Date header, e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
///
/// Computed arithmetically (proleptic Gregorian calendar, always GMT) so neither Foundation nor the
/// C library's locale-dependent time functions are needed.
public enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    public static func format(secondsSince1970: Int) -> String {
        let (days, secondOfDay) = floorDivide(secondsSince1970, 86_400)
        let (year, month, day) = civilDate(daysSince1970: days)
        let weekday = floorDivide(days + 4, 7).remainder  // 1970-01-01 was a Thursday.
        let hour = secondOfDay / 3600, minute = secondOfDay / 60 % 60, second = secondOfDay % 60
        return "\(weekdays[weekday]), \(pad(day, 2)) \(months[month - 1]) \(pad(year, 4)) "
            + "\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)) GMT"
    }

    /// Howard Hinnant's `civil_from_days`: days since 1970-01-01 → (year, month 1...12, day 1...31).
    static func civilDate(daysSince1970: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = daysSince1970 + 719_468                        // Days since 0000-03-01.
        let era = floorDivide(shifted, 146_097).quotient
        let dayOfEra = shifted - era * 146_097                       // 0...146096
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)  // From March 1st.
        let shiftedMonth = (5 * dayOfYear + 2) / 153                 // 0 = March.
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func floorDivide(_ value: Int, _ divisor: Int) -> (quotient: Int, remainder: Int) {
        let quotient = value >= 0 ? value / divisor : (value - divisor + 1) / divisor
        return (quotient, value - quotient * divisor)
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
