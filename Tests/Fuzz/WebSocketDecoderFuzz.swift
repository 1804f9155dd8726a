// libFuzzer target for WebSocketDecoder (frame parsing, unmasking, reassembly, UTF-8 validation).
// Compiled into the ParlorCodec module itself (see run.sh).
//
// Input layout: byte 0 picks the limits, the role (mostly .server) and how the bytes are fed, byte 1
// parameterizes the feeding, the rest is the byte stream the peer sends. Checks:
// - no crash, no hang (libFuzzer -timeout);
// - fed in one piece or in chunks, the decoder returns the same messages and then the same error;
// - both agree with a straightforward whole-input model of RFC 6455 written here, which validates
//   text with the standard library (String(validating:)) instead of the project's UTF8Validator:
//   same messages (so text is valid UTF-8 and round-trips through String), same close code;
// - control payloads are at most 125 bytes, data messages at most the message limit;
// - every message survives WebSocketFrameEncoder → a fresh decoder unchanged;
// - after an error the decoder stays dead: same error again, new bytes ignored, nothing buffered.

struct WebSocketFuzzOutcome: Equatable {
    var messages: [WebSocketMessage] = []
    var error: WebSocketProtocolError?
}

enum WebSocketDecoderFuzz {
    /// (maxFrameSize, maxMessageSize): small, so the limits are reached by short inputs.
    static let limitChoices: [(frame: Int, message: Int)] = [(125, 256), (16, 64), (300, 300), (1024, 2048)]

    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fatalError("WebSocket decoder invariant violated: \(message())") }
    }

    static func run(
        _ stream: [UInt8], pieces: [Range<Int>], role: WebSocketRole, maxFrame: Int, maxMessage: Int
    ) -> WebSocketFuzzOutcome {
        var decoder = WebSocketDecoder(role: role, maxFrameSize: maxFrame, maxMessageSize: maxMessage)
        var outcome = WebSocketFuzzOutcome()
        for piece in pieces {
            stream[piece].withUnsafeBytes { decoder.append($0) }
            if let error = outcome.error {
                checkDead(&decoder, error)
                continue
            }
            do throws(WebSocketProtocolError) {
                while let message = try decoder.next() {
                    checkMessage(message, maxMessage: maxMessage)
                    outcome.messages.append(message)
                }
            } catch {
                outcome.error = error
                checkDead(&decoder, error)
            }
        }
        if let error = outcome.error {
            decoder.append([0x89, 0x80, 1, 2, 3, 4, 0x89, 0x00])
            checkDead(&decoder, error)
        }
        return outcome
    }

    static func checkDead(_ decoder: inout WebSocketDecoder, _ error: WebSocketProtocolError) {
        check(decoder.buffer.isEmpty && decoder.messageBytes.isEmpty, "a failed decoder still buffers bytes")
        for _ in 0..<2 {
            do throws(WebSocketProtocolError) {
                let message = try decoder.next()
                check(false, "a failed decoder returned \(String(describing: message))")
            } catch let again {
                check(again == error, "a failed decoder threw \(again) after \(error)")
            }
        }
    }

    static func checkMessage(_ message: WebSocketMessage, maxMessage: Int) {
        switch message {
        case .text(let text):
            // (That the text is exactly the valid UTF-8 that was sent is checked against the model.)
            check(text.utf8.count <= maxMessage, "text message of \(text.utf8.count) bytes over \(maxMessage)")
        case .binary(let bytes):
            check(bytes.count <= maxMessage, "binary message of \(bytes.count) bytes over \(maxMessage)")
        case .ping(let payload), .pong(let payload):
            check(payload.count <= 125, "control payload of \(payload.count) bytes")
        case .close(let code, let reason):
            check(2 + reason.utf8.count <= 125, "close reason of \(reason.utf8.count) bytes")
            check(code.map(WebSocketCloseCode.isValidOnWire) ?? reason.isEmpty, "close code \(String(describing: code))")
        }
        roundTrip(message)
    }

    /// The message as exact bytes (String equality is canonical equivalence, not byte equality).
    static func exact(_ message: WebSocketMessage) -> [UInt8] {
        switch message {
        case .text(let text): [1] + Array(text.utf8)
        case .binary(let bytes): [2] + bytes
        case .ping(let payload): [9] + payload
        case .pong(let payload): [10] + payload
        case .close(nil, let reason): [8] + Array(reason.utf8)
        case .close(let code?, let reason): [8, 0, UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8)
        }
    }

    /// Encodes `message` as the peer would (masked for a server to decode) and decodes it again.
    static func roundTrip(_ message: WebSocketMessage) {
        let mask: WebSocketFrameEncoder.Mask = (0xA5, 0x0F, 0x3C, 0x81)
        let frame: [UInt8]
        switch message {
        case .text(let text): frame = WebSocketFrameEncoder.text(text, mask: mask)
        case .binary(let bytes): frame = WebSocketFrameEncoder.frame(.binary, payload: bytes, mask: mask)
        case .ping(let payload): frame = WebSocketFrameEncoder.frame(.ping, payload: payload, mask: mask)
        case .pong(let payload): frame = WebSocketFrameEncoder.frame(.pong, payload: payload, mask: mask)
        case .close(nil, _): frame = WebSocketFrameEncoder.frame(.close, payload: [], mask: mask)
        case .close(let code?, let reason): frame = WebSocketFrameEncoder.close(code: code, reason: reason, mask: mask)
        }
        var decoder = WebSocketDecoder(role: .server)
        decoder.append(frame)
        do throws(WebSocketProtocolError) {
            let decoded = try decoder.next()
            check(decoded.map(exact) == exact(message), "\(message) re-encoded decodes as \(String(describing: decoded))")
            check(decoder.buffer.isEmpty, "re-encoded \(message) left bytes behind")
        } catch {
            check(false, "\(message) re-encoded fails to decode: \(error)")
        }
    }

    /// Splits `count` bytes into pieces as `mode` and `parameter` say.
    static func pieces(count: Int, mode: UInt8, _ parameter: UInt8) -> [Range<Int>] {
        switch mode {
        case 0: // one split point anywhere
            let point = Int(parameter) * count / 255
            return [0..<point, point..<count]
        case 1: // fixed-size chunks of 1...16 bytes
            let size = Int(parameter % 16) + 1
            return stride(from: 0, to: count, by: size).map { $0..<min($0 + size, count) }
        case 2: // chunk sizes cycling through the parameter's bits: 1–2, 1–2, ... bytes
            var ranges: [Range<Int>] = [], start = 0, bit = 0
            while start < count {
                let end = min(count, start + 1 + Int(parameter >> (bit % 8) & 1))
                ranges.append(start..<end)
                start = end
                bit += 1
            }
            return ranges
        default: // byte at a time
            return (0..<count).map { $0..<($0 + 1) }
        }
    }
}

/// An independent, non-incremental reading of RFC 6455 over the whole input, as the reference.
/// Text is checked with the standard library's UTF-8 validation, eagerly (as far as the bytes go)
/// like the decoder, so that both fail at the same point of the stream.
enum WebSocketModel {
    static func decode(_ bytes: [UInt8], role: WebSocketRole, maxFrame: Int, maxMessage: Int)
        -> (messages: [WebSocketMessage], closeCode: UInt16?) {
        var messages: [WebSocketMessage] = []
        func fail(_ code: UInt16) -> (messages: [WebSocketMessage], closeCode: UInt16?) { (messages, code) }
        var index = 0
        var messageOpcode: UInt8?
        var message: [UInt8] = []
        while bytes.count - index >= 2 {
            let first = bytes[index], second = bytes[index + 1]
            let fin = first & 0x80 != 0, opcode = first & 0x0F, masked = second & 0x80 != 0
            let isControl = opcode >= 8
            if first & 0x70 != 0 { return fail(1002) }
            if ![0, 1, 2, 8, 9, 10].contains(opcode) { return fail(1002) }
            if masked != (role == .server) { return fail(1002) }
            if isControl {
                if !fin || second & 0x7F > 125 { return fail(1002) }
            } else if opcode == 0 {
                if messageOpcode == nil { return fail(1002) }
            } else if messageOpcode != nil {
                return fail(1002)
            }
            var position = index + 2
            var length = UInt64(second & 0x7F)
            let extended = length == 127 ? 8 : length == 126 ? 2 : 0
            if extended > 0 {
                guard bytes.count - position >= extended else { break }
                length = 0
                for offset in 0..<extended { length = length << 8 | UInt64(bytes[position + offset]) }
                if length >= 1 << 63 { return fail(1002) }
                position += extended
            }
            if length > UInt64(maxFrame) { return fail(1009) }
            if !isControl && UInt64(message.count) + length > UInt64(maxMessage) { return fail(1009) }
            var key: [UInt8] = [0, 0, 0, 0]
            if masked {
                guard bytes.count - position >= 4 else { break }
                key = Array(bytes[position..<(position + 4)])
                position += 4
            }
            let count = Int(length)
            if isControl {
                guard bytes.count - position >= count else { break }
                let payload = (0..<count).map { bytes[position + $0] ^ key[$0 % 4] }
                switch opcode {
                case 9: messages.append(.ping(payload))
                case 10: messages.append(.pong(payload))
                default:
                    if payload.isEmpty {
                        messages.append(.close(code: nil, reason: ""))
                    } else {
                        if payload.count == 1 { return fail(1002) }
                        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
                        guard [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011].contains(code)
                            || (3000...4999).contains(code) else { return fail(1002) }
                        guard let reason = String(validating: payload[2...], as: UTF8.self) else { return fail(1007) }
                        messages.append(.close(code: code, reason: reason))
                    }
                }
                index = position + count
                continue
            }
            if opcode != 0 { messageOpcode = opcode }
            let available = min(count, bytes.count - position)
            message.append(contentsOf: (0..<available).map { bytes[position + $0] ^ key[$0 % 4] })
            if messageOpcode == 1 && !isValidUTF8Prefix(message) { return fail(1007) }
            guard available == count else { break }
            index = position + count
            if fin {
                if messageOpcode == 1 {
                    guard let text = String(validating: message, as: UTF8.self) else { return fail(1007) }
                    messages.append(.text(text))
                } else {
                    messages.append(.binary(message))
                }
                messageOpcode = nil
                message = []
            }
        }
        return (messages, nil)
    }

    /// Whether some continuation makes `bytes` valid UTF-8. At most 3 more bytes can be needed, and one
    /// of 0x80, 0x90 or 0xA0 repeated fits every second-byte range (E0: A0–BF, ED: 80–9F, F0: 90–BF, F4: 80–8F).
    static func isValidUTF8Prefix(_ bytes: [UInt8]) -> Bool {
        if String(validating: bytes, as: UTF8.self) != nil { return true }
        for filler: UInt8 in [0x80, 0x90, 0xA0] {
            for extra in 1...3 where String(validating: bytes + Array(repeating: filler, count: extra), as: UTF8.self) != nil {
                return true
            }
        }
        return false
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 2 else { return 0 }
    let config = data[0], parameter = data[1]
    let stream = Array(UnsafeBufferPointer(start: data + 2, count: size - 2))
    let limits = WebSocketDecoderFuzz.limitChoices[Int(config & 3)]
    // Mostly the server role (clients mask); one input in eight exercises the unmasked client side.
    let role: WebSocketRole = config & 0xE0 == 0xE0 ? .client : .server

    let whole = WebSocketDecoderFuzz.run(stream, pieces: [0..<stream.count], role: role,
                                         maxFrame: limits.frame, maxMessage: limits.message)
    let chunked = WebSocketDecoderFuzz.run(
        stream, pieces: WebSocketDecoderFuzz.pieces(count: stream.count, mode: (config >> 2) & 3, parameter),
        role: role, maxFrame: limits.frame, maxMessage: limits.message)
    WebSocketDecoderFuzz.check(whole == chunked, """
        results depend on how the bytes are split: \(whole.messages.count) messages then \
        \(whole.error.map { "\($0)" } ?? "no error") in one piece, \(chunked.messages.count) messages then \
        \(chunked.error.map { "\($0)" } ?? "no error") in pieces
        """)

    let model = WebSocketModel.decode(stream, role: role, maxFrame: limits.frame, maxMessage: limits.message)
    WebSocketDecoderFuzz.check(model.messages.map(WebSocketDecoderFuzz.exact) == whole.messages.map(WebSocketDecoderFuzz.exact)
        && model.closeCode == whole.error?.closeCode, """
        the decoder disagrees with the model: \(whole.messages.count) messages then \
        \(whole.error.map { "close \($0.closeCode) (\($0.reason))" } ?? "no error"), model: \
        \(model.messages.count) messages then \(model.closeCode.map { "close \($0)" } ?? "no error")
        """)
    return 0
}
