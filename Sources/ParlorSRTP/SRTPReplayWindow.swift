/// The replay list of RFC 3711 §3.3.2 as a 128-bit sliding bitmap below the highest index accepted: bit k says
/// whether index `highest - k` was accepted. Used for SRTP's 48-bit packet index and SRTCP's 31-bit index.
///
/// 128 packets, as libsrtp uses for SRTP and SRTCP (its default `window_size`): at Opus's 50 packets a second that is
/// 2.5 s of reordering, far beyond any jitter buffer, and two machine words keep the check and the shift branch-light.
/// (ParlorMedia's libsrtp2 sessions had 1024; a packet reordered by more than 128 is now refused as too old.)
struct SRTPReplayWindow: Equatable {
    static let size: UInt64 = 128

    private(set) var highest: UInt64 = 0
    private var low: UInt64 = 0 // bits 0–63: highest … highest - 63
    private var high: UInt64 = 0 // bits 64–127
    private(set) var isEmpty = true

    /// Throws if `index` was accepted before or lies below the window; never changes the window.
    func check(_ index: UInt64) throws(SRTPError) {
        guard !isEmpty, index <= highest else { return }
        let age = highest - index
        guard age < Self.size else { throw .tooOld(index: index) }
        if isAccepted(age: age) { throw .replayed(index: index) }
    }

    /// Marks `index` accepted, sliding the window when it is the new highest. Call after `check` and authentication.
    mutating func accept(_ index: UInt64) {
        if isEmpty {
            isEmpty = false
            highest = index
            low = 1
            high = 0
            return
        }
        if index > highest {
            shift(by: index - highest)
            highest = index
            low |= 1
        } else {
            let age = highest - index
            guard age < Self.size else { return }
            if age < 64 { low |= 1 << age } else { high |= 1 << (age - 64) }
        }
    }

    private func isAccepted(age: UInt64) -> Bool {
        age < 64 ? low & (1 << age) != 0 : high & (1 << (age - 64)) != 0
    }

    /// Ages every bit by `distance` (the new highest index is `distance` above the old).
    private mutating func shift(by distance: UInt64) {
        if distance >= 128 {
            low = 0
            high = 0
        } else if distance >= 64 {
            high = distance == 64 ? low : low << (distance - 64)
            low = 0
        } else {
            high = high << distance | low >> (64 - distance)
            low <<= distance
        }
    }
}
