/// The 4-byte masking key of a frame (RFC 6455 §5.3): payload byte i is XORed with key byte i % 4.
struct WebSocketMask: Sendable {
    var bytes: (UInt8, UInt8, UInt8, UInt8)

    init(_ bytes: (UInt8, UInt8, UInt8, UInt8)) {
        self.bytes = bytes
    }

    subscript(index: Int) -> UInt8 {
        switch index & 3 {
        case 0: bytes.0
        case 1: bytes.1
        case 2: bytes.2
        default: bytes.3
        }
    }

    /// XORs `buffer` in place, where `buffer[0]` is payload byte number `phase` of its frame
    /// (payloads arrive in pieces, so a piece can start anywhere in the key).
    func apply(to buffer: UnsafeMutableRawBufferPointer, phase: Int) {
        let count = buffer.count
        var index = 0
        if count >= 8 {
            // Eight bytes at a time: the key pattern laid out in memory order works for either endianness.
            var pattern: UInt64 = 0
            withUnsafeMutableBytes(of: &pattern) { word in
                for byte in 0..<8 { word[byte] = self[phase + byte] }
            }
            while index + 8 <= count {
                let word = buffer.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                buffer.storeBytes(of: word ^ pattern, toByteOffset: index, as: UInt64.self)
                index += 8
            }
        }
        while index < count {
            buffer[index] ^= self[phase + index]
            index += 1
        }
    }

    /// Appends `source` masked (or unmasked: the operation is its own inverse) to `output`.
    func append(_ source: UnsafeRawBufferPointer, phase: Int, to output: inout [UInt8]) {
        let start = output.count
        output.append(contentsOf: source)
        output.withUnsafeMutableBytes { apply(to: UnsafeMutableRawBufferPointer(rebasing: $0[start...]), phase: phase) }
    }
}
