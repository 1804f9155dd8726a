/// Builds complete RFC 6455 frames.
///
/// Servers send unmasked frames (`mask: nil`); clients must mask every frame with a fresh random key.
public enum WebSocketFrameEncoder {
    public typealias Mask = (UInt8, UInt8, UInt8, UInt8)

    /// Largest close reason: a control payload is at most 125 bytes, 2 of which are the code.
    static let maxCloseReasonLength = 123

    /// One complete frame carrying `payload`.
    public static func frame(
        _ opcode: WebSocketOpcode, payload: UnsafeRawBufferPointer, fin: Bool = true, mask: Mask? = nil
    ) -> [UInt8] {
        frame(opcode, payload: Array(payload), fin: fin, mask: mask)
    }

    /// The same, for bytes in an array: every event and reply the server sends comes through here, so the payload
    /// is appended as an array (one copy), not as a raw buffer (which appends byte by byte).
    public static func frame(
        _ opcode: WebSocketOpcode, payload: [UInt8], fin: Bool = true, mask: Mask? = nil
    ) -> [UInt8] {
        let length = payload.count
        var frame: [UInt8] = []
        frame.reserveCapacity(14 + length)
        frame.append((fin ? 0x80 : 0) | opcode.rawValue)
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        switch length {
        case ..<126:
            frame.append(maskBit | UInt8(length))
        case ...0xFFFF:
            frame.append(maskBit | 126)
            appendBigEndian(UInt64(length), byteCount: 2, to: &frame)
        default:
            frame.append(maskBit | 127)
            appendBigEndian(UInt64(length), byteCount: 8, to: &frame)
        }
        if let mask {
            frame.append(contentsOf: [mask.0, mask.1, mask.2, mask.3])
            payload.withUnsafeBytes { WebSocketMask(mask).append($0, phase: 0, to: &frame) }
        } else {
            frame.append(contentsOf: payload)
        }
        return frame
    }

    /// The size of the unmasked frame (a server's) carrying `payloadCount` bytes: what it costs a connection's output.
    public static func unmaskedFrameSize(payloadCount: Int) -> Int {
        switch payloadCount {
        case ..<126: 2 + payloadCount
        case ...0xFFFF: 4 + payloadCount
        default: 10 + payloadCount
        }
    }

    /// A complete, unfragmented text frame.
    public static func text(_ string: String, mask: Mask? = nil) -> [UInt8] {
        frame(.text, payload: Array(string.utf8), mask: mask)
    }

    /// A close frame; the reason is truncated to fit the 125-byte control payload, at a UTF-8 boundary.
    public static func close(code: UInt16, reason: String = "", mask: Mask? = nil) -> [UInt8] {
        var payload: [UInt8] = [UInt8(code >> 8), UInt8(code & 0xFF)]
        payload.append(contentsOf: truncatedUTF8(reason, maxBytes: maxCloseReasonLength))
        return frame(.close, payload: payload, mask: mask)
    }

    /// The first at most `maxBytes` bytes of `text`, never cutting a code point in two.
    static func truncatedUTF8(_ text: String, maxBytes: Int) -> [UInt8] {
        var bytes = Array(text.utf8)
        guard bytes.count > maxBytes else { return bytes }
        var end = maxBytes
        // Back up over continuation bytes (10xxxxxx) so the cut lands before a lead byte.
        while end > 0 && bytes[end] & 0xC0 == 0x80 {
            end -= 1
        }
        bytes.removeSubrange(end...)
        return bytes
    }

    private static func appendBigEndian(_ value: UInt64, byteCount: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: (byteCount - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
