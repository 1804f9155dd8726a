/// Incremental RFC 6455 frame decoder that hands out complete messages.
///
/// Data frame payloads are unmasked and, for text, UTF-8 validated as they arrive, straight into the
/// message being reassembled: nothing is buffered twice, and invalid text is reported as soon as the
/// offending bytes are in, even in the middle of a frame. Size limits are checked from the frame header,
/// before the payload arrives. After an error the decoder is dead and keeps throwing the same error.
public struct WebSocketDecoder: Sendable {
    /// A parsed frame header.
    struct FrameHeader: Sendable {
        var fin: Bool
        var opcode: WebSocketOpcode
        var mask: WebSocketMask?
        var payloadLength: Int
        var headerLength: Int
    }

    let role: WebSocketRole
    let maxFrameSize: Int
    let maxMessageSize: Int

    /// Released whenever it empties: an idle connection holds no receive storage.
    var buffer = ReceiveBuffer(retainedCapacity: 0)
    /// The frame whose payload is being read, once its header has been consumed.
    var frame: FrameHeader?
    /// How many payload bytes of `frame` have been consumed (also the masking phase).
    var frameOffset = 0
    /// The data message being reassembled: text or binary, nil between messages.
    var messageOpcode: WebSocketOpcode?
    var messageBytes: [UInt8] = []
    var utf8 = UTF8Validator()
    var failure: WebSocketProtocolError?
    /// Frames whose header has been decoded so far, control frames and continuations included (for rate limits).
    public private(set) var frameCount = 0

    public init(role: WebSocketRole, maxFrameSize: Int = 65536, maxMessageSize: Int = 65536) {
        self.role = role
        self.maxFrameSize = maxFrameSize
        self.maxMessageSize = maxMessageSize
    }

    /// Feeds received bytes. Bytes appended after a protocol error are ignored.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        buffer.append(bytes)
    }

    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The next complete message, or nil if more bytes are needed. Control frames are returned as soon as
    /// they are complete, also between the fragments of a data message.
    /// Throws the close code to send; after that the decoder is dead.
    public mutating func next() throws(WebSocketProtocolError) -> WebSocketMessage? {
        if let failure { throw failure }
        do throws(WebSocketProtocolError) {
            return try decodeNext()
        } catch {
            failure = error
            buffer = ReceiveBuffer(retainedCapacity: 0)
            messageBytes = []
            throw error
        }
    }

    private mutating func decodeNext() throws(WebSocketProtocolError) -> WebSocketMessage? {
        while true {
            if frame == nil {
                guard let header = try parseHeader() else { return nil }
                buffer.consume(header.headerLength)
                frameCount += 1
                frame = header
                frameOffset = 0
                if header.opcode == .text || header.opcode == .binary {
                    messageOpcode = header.opcode
                    utf8.reset()
                }
            }
            guard let header = frame else { return nil }

            if header.opcode.isControl {
                // At most 125 bytes: simply wait for the whole payload.
                guard buffer.readableCount >= header.payloadLength else { return nil }
                var payload = buffer.read(header.payloadLength)
                if let mask = header.mask {
                    payload.withUnsafeMutableBytes { mask.apply(to: $0, phase: 0) }
                }
                frame = nil
                return try Self.controlMessage(header.opcode, payload: payload)
            }

            let available = min(buffer.readableCount, header.payloadLength - frameOffset)
            if available > 0 {
                try absorbPayload(count: available, of: header)
            }
            guard frameOffset == header.payloadLength else { return nil }
            frame = nil
            if header.fin {
                return try finishMessage()
            }
        }
    }

    /// Moves `count` buffered payload bytes into the message, unmasking and validating them.
    private mutating func absorbPayload(count: Int, of header: FrameHeader) throws(WebSocketProtocolError) {
        let start = messageBytes.count
        if let mask = header.mask {
            let phase = frameOffset
            buffer.slice(0..<count).withUnsafeBytes { mask.append($0, phase: phase, to: &messageBytes) }
        } else {
            messageBytes.append(contentsOf: buffer.slice(0..<count))
        }
        buffer.consume(count)
        frameOffset += count
        if messageOpcode == .text {
            let valid = messageBytes.withUnsafeBytes { utf8.validate(UnsafeRawBufferPointer(rebasing: $0[start...])) }
            guard valid else { throw .invalidPayload("Text message is not valid UTF-8.") }
        }
    }

    private mutating func finishMessage() throws(WebSocketProtocolError) -> WebSocketMessage? {
        let bytes = messageBytes
        let opcode = messageOpcode
        messageBytes = []
        messageOpcode = nil
        switch opcode {
        case .text:
            guard utf8.isComplete else {
                throw .invalidPayload("Text message ends in the middle of a UTF-8 sequence.")
            }
            return .text(String(decoding: bytes, as: UTF8.self))
        case .binary:
            return .binary(bytes)
        default:
            return nil
        }
    }
}
