import Testing
@testable import ParlorCodec

@Suite struct HandshakeTests {
    /// What the formula puts together, checked with a SHA-1 that hashes nothing: the key, then the GUID, in base64.
    /// The real digest (and RFC 6455's example) is checked where it comes from a library: ParlorClientTests, ParlorAppTests.
    @Test func acceptValueHashesTheKeyThenTheGUID() {
        let key = "dGhlIHNhbXBsZSBub25jZQ=="
        #expect(WebSocketHandshake.isValidKey(key))
        var hashed: [UInt8] = []
        let accept = WebSocketHandshake.acceptValue(forKey: key, sha1: { hashed = $0; return [0xFF, 0x00] })
        #expect(hashed == Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))
        #expect(accept == "/wA=")
    }

    @Test(arguments: ["dGhlIHNhbXBsZQ==", "dGhlIHNhbXBsZSBub25jZQ", "", "dGhlIHNhbXBsZSBub25jZQ==AAAA", "dGhlIHNhbXBsZSBub25jZ!=="])
    func invalidKeys(key: String) {
        #expect(!WebSocketHandshake.isValidKey(key))
    }

    @Test(arguments: [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
                      ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy")])
    func base64KnownVectors(plain: String, encoded: String) {
        #expect(Base64.encode([UInt8](plain)) == encoded)
        #expect(Base64.decode(encoded) == [UInt8](plain))
    }

    @Test func base64RoundTripsEveryByteValueAndLength() {
        for length in 0...40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ length) }
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        }
        let all = (0...255).map { UInt8($0) }
        #expect(Base64.decode(Base64.encode(all)) == all)
    }

    @Test(arguments: ["Zg=", "Zg", "Z===", "====", "Zm9v YmFy", "Zg==Zg==", "Zm9=vYmF", "@@@@", "Zm9v\n"])
    func base64RejectsMalformedInput(input: String) {
        #expect(Base64.decode(input) == nil)
    }
}
