import Foundation
import Testing
@testable import ParlorRooms

@Suite struct TimestampTests {
    /// Foundation's formatter as the reference (Gregorian from 1583 on, where it and the proleptic calendar agree).
    private static func reference(_ milliseconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    @Test func formatsLikeFoundationAcrossTheYears() {
        var generator = SystemRandomNumberGenerator()
        // 1600-01-01 to 9999-12-31, plus the edges of a day and of the epoch.
        let low: Int64 = -11_676_096_000_000, high: Int64 = 253_402_300_799_999
        var samples: [Int64] = [0, 1, 999, 1000, 86_399_999, 86_400_000, -1, -1000, 951_782_400_000, high]
        for _ in 0..<2000 { samples.append(Int64.random(in: low...high, using: &generator)) }
        for milliseconds in samples {
            #expect(Timestamp.iso8601(milliseconds: milliseconds) == Self.reference(milliseconds), "\(milliseconds)")
        }
    }

    @Test func yearsPastFourDigitsKeepTheirDigits() {
        #expect(Timestamp.iso8601(milliseconds: 253_402_300_800_000) == "10000-01-01T00:00:00.000Z")
        #expect(Timestamp.iso8601(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
    }
}
