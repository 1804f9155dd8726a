extension WebSocketDecoder {
    /// Parses the frame header at the front of the buffer without consuming it; nil if incomplete.
    ///
    /// Each rule is checked as soon as the bytes it needs are in: the first two bytes settle everything
    /// but the sizes, and the extended length settles the sizes before the masking key even arrives.
    func parseHeader() throws(WebSocketProtocolError) -> FrameHeader? {
        guard buffer.readableCount >= 2 else { return nil }
        let first = buffer[0], second = buffer[1]

        guard first & 0x70 == 0 else {
            throw .protocolError("Reserved bits are set but no extension was negotiated.")
        }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
            throw .protocolError("Frame uses reserved opcode \(first & 0x0F).")
        }
        let fin = first & 0x80 != 0
        let masked = second & 0x80 != 0
        let shortLength = second & 0x7F

        switch role {
        case .server where !masked:
            throw .protocolError("Frames from a client must be masked.")
        case .client where masked:
            throw .protocolError("Frames from a server must not be masked.")
        default:
            break
        }
        if opcode.isControl {
            guard fin else { throw .protocolError("Control frames must not be fragmented.") }
            guard shortLength <= 125 else { throw .protocolError("Control frame payload is longer than 125 bytes.") }
        } else if opcode == .continuation {
            guard messageOpcode != nil else { throw .protocolError("Continuation frame without a message to continue.") }
        } else {
            guard messageOpcode == nil else { throw .protocolError("New data frame while a fragmented message is in progress.") }
        }

        let extendedLengthSize = shortLength == 127 ? 8 : shortLength == 126 ? 2 : 0
        guard buffer.readableCount >= 2 + extendedLengthSize else { return nil }
        var length = UInt64(shortLength)
        if extendedLengthSize > 0 {
            length = (0..<extendedLengthSize).reduce(0) { $0 << 8 | UInt64(buffer[2 + $1]) }
            guard length >> 63 == 0 else { throw .protocolError("Frame length has its most significant bit set.") }
        }
        // Non-minimal length encodings are tolerated, as most implementations do.
        guard length <= UInt64(maxFrameSize) else {
            throw .messageTooBig("Frame of \(length) bytes exceeds the limit of \(maxFrameSize).")
        }
        if !opcode.isControl {
            guard UInt64(messageBytes.count) + length <= UInt64(maxMessageSize) else {
                throw .messageTooBig("Message exceeds the limit of \(maxMessageSize) bytes.")
            }
        }

        let headerLength = 2 + extendedLengthSize + (masked ? 4 : 0)
        guard buffer.readableCount >= headerLength else { return nil }
        var mask: WebSocketMask?
        if masked {
            let keyStart = 2 + extendedLengthSize
            mask = WebSocketMask((buffer[keyStart], buffer[keyStart + 1], buffer[keyStart + 2], buffer[keyStart + 3]))
        }
        return FrameHeader(fin: fin, opcode: opcode, mask: mask, payloadLength: Int(length), headerLength: headerLength)
    }

    /// Turns a complete, unmasked control frame payload into a message.
    static func controlMessage(_ opcode: WebSocketOpcode, payload: [UInt8]) throws(WebSocketProtocolError) -> WebSocketMessage {
        switch opcode {
        case .ping:
            return .ping(payload)
        case .pong:
            return .pong(payload)
        default:
            return try closeMessage(payload)
        }
    }

    /// Close payload: empty, or a 2-byte code followed by a UTF-8 reason (RFC 6455 §5.5.1).
    static func closeMessage(_ payload: [UInt8]) throws(WebSocketProtocolError) -> WebSocketMessage {
        guard !payload.isEmpty else { return .close(code: nil, reason: "") }
        guard payload.count >= 2 else { throw .protocolError("Close frame payload of 1 byte.") }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard WebSocketCloseCode.isValidOnWire(code) else {
            throw .protocolError("Close code \(code) is not allowed.")
        }
        let reason = payload[2...]
        guard UTF8Validator.isValid(reason) else {
            throw .invalidPayload("Close reason is not valid UTF-8.")
        }
        return .close(code: code, reason: String(decoding: reason, as: UTF8.self))
    }
}
