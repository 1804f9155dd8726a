/// The elements of an RTP header extension in the general mechanism of RFC 8285: one-byte headers (profile 0xBEDE,
/// ids 1–14, 1–16 bytes each) or two-byte headers (profile 0x100x, ids 1–255, 0–255 bytes each).
public struct RTPHeaderExtensions: Sendable, Equatable {
    public struct Element: Sendable, Equatable {
        public var id: Int
        /// Where the element's data lies in the packet.
        public var range: Range<Int>
    }

    public private(set) var elements: [Element] = []

    /// Reads the elements of `header`'s extension in `packet`; none when the packet has no extension, or one of
    /// another profile. Stops at the first element that would run past the extension (what precedes it stays).
    public init(header: RTPHeader, packet: [UInt8]) {
        guard let profile = header.extensionProfile, let range = header.extensionRange else { return }
        let oneByte = profile == 0xBEDE
        guard oneByte || profile & 0xFFF0 == 0x1000 else { return }
        var offset = range.lowerBound
        while offset < range.upperBound {
            let first = packet[offset]
            if first == 0 {  // padding between elements
                offset += 1
                continue
            }
            let id: Int, length: Int, start: Int
            if oneByte {
                id = Int(first >> 4)
                if id == 15 { break }  // reserved: stop reading (RFC 8285 §4.2)
                length = Int(first & 0x0F) + 1
                start = offset + 1
            } else {
                guard offset + 1 < range.upperBound else { break }
                id = Int(first)
                length = Int(packet[offset + 1])
                start = offset + 2
            }
            guard start + length <= range.upperBound else { break }
            elements.append(Element(id: id, range: start..<(start + length)))
            offset = start + length
        }
    }

    public func element(id: Int) -> Element? { elements.first { $0.id == id } }

    /// The RFC 6464 client-to-mixer audio level under `id`: the voice activity flag and the level in -dBov
    /// (0 loudest, 127 silence).
    public func audioLevel(id: Int, in packet: [UInt8]) -> AudioLevel? {
        guard let element = element(id: id), !element.range.isEmpty else { return nil }
        let byte = packet[element.range.lowerBound]
        return AudioLevel(voiceActivity: byte & 0x80 != 0, level: byte & 0x7F)
    }
}

/// RFC 6464's audio level: `level` is minus the sound's dBov (0 loudest … 127 silent).
public struct AudioLevel: Sendable, Equatable {
    public var voiceActivity: Bool
    public var level: UInt8
}
