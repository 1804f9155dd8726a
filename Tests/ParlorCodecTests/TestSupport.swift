@testable import ParlorCodec

extension Array where Element == UInt8 {
    init(_ text: String) {
        self = Array(text.utf8)
    }
}

/// Feeds `raw` in one piece and collects every request until more bytes are needed.
func parseAll(_ raw: String, limits: HTTPParserLimits = .init()) throws(HTTPParseError) -> [HTTPRequest] {
    var parser = HTTPRequestParser(limits: limits)
    parser.append([UInt8](raw))
    var requests: [HTTPRequest] = []
    while let request = try parser.next() {
        requests.append(request)
    }
    return requests
}

/// The error parsing `raw` produces, or nil if it parses (completely or partially) without one.
func parseError(_ raw: String, limits: HTTPParserLimits = .init()) -> HTTPParseError? {
    do throws(HTTPParseError) {
        _ = try parseAll(raw, limits: limits)
        return nil
    } catch {
        return error
    }
}

/// The fixed masking key from the RFC 6455 §5.7 examples.
let testMask: WebSocketFrameEncoder.Mask = (0x37, 0xFA, 0x21, 0x3D)

/// A frame as a client sends it (masked), optionally with raw header flags set for negative tests.
func clientFrame(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
    WebSocketFrameEncoder.frame(opcode, payload: payload, fin: fin, mask: testMask)
}

/// Decodes everything `bytes` contains with a fresh decoder; returns the messages and the error, if any.
func decodeAll(
    _ bytes: [UInt8], role: WebSocketRole = .server, maxFrameSize: Int = 65536, maxMessageSize: Int = 65536
) -> (messages: [WebSocketMessage], error: WebSocketProtocolError?) {
    var decoder = WebSocketDecoder(role: role, maxFrameSize: maxFrameSize, maxMessageSize: maxMessageSize)
    decoder.append(bytes)
    var messages: [WebSocketMessage] = []
    do throws(WebSocketProtocolError) {
        while let message = try decoder.next() {
            messages.append(message)
        }
        return (messages, nil)
    } catch {
        return (messages, error)
    }
}
