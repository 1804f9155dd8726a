import COpenSSL
import ParlorCodec
import ParlorProtocol

/// Checks an upgrade request against RFC 6455 section 4.2.1 and computes Sec-WebSocket-Accept.
enum WebSocketHandshakeValidator {
    static func acceptValue(for head: HTTPRequestHead) throws(HTTPError) -> String {
        guard head.method == "GET", head.versionMinor == 1 else {
            throw HTTPError.badRequest(.wsBadHandshake, "a WebSocket upgrade must be an HTTP/1.1 GET")
        }
        guard head.headers.tokens("Upgrade").contains("websocket"), head.headers.tokens("Connection").contains("upgrade") else {
            throw HTTPError(.wsUpgradeRequired, title: "Upgrade required",
                            detail: "this endpoint speaks WebSocket: send Upgrade: websocket and Connection: Upgrade",
                            headers: HTTPHeaders([("Upgrade", "websocket"), ("Sec-WebSocket-Version", "13")]))
        }
        guard head.headers.values("Sec-WebSocket-Version").count == 1, head.headers["Sec-WebSocket-Version"] == "13" else {
            throw HTTPError(.wsUnsupportedVersion, title: "Upgrade required",
                            detail: "only WebSocket version 13 is supported",
                            headers: HTTPHeaders([("Sec-WebSocket-Version", "13")]))
        }
        guard head.headers.values("Sec-WebSocket-Key").count == 1, let key = head.headers["Sec-WebSocket-Key"],
              WebSocketHandshake.isValidKey(key) else {
            throw HTTPError.badRequest(.wsBadHandshake, "Sec-WebSocket-Key must be base64 of 16 bytes")
        }
        return WebSocketHandshake.acceptValue(forKey: key, sha1: sha1)
    }

    static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
        _ = bytes.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { output in
                SHA1(input.baseAddress, input.count, output.baseAddress)
            }
        }
        return digest
    }
}
