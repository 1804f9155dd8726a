import Testing
@testable import ParlorCodec

@Suite struct HandshakeTests {
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    @Test(arguments: [
        ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
    ])
    func sha1KnownVectors(input: String, digest: String) {
        #expect(Self.hex(SHA1.hash([UInt8](input))) == digest)
    }

    @Test func sha1OfAMillionAs() {
        let digest = SHA1.hash([UInt8](repeating: 0x61, count: 1_000_000))
        #expect(Self.hex(digest) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    @Test func rfc6455AcceptValue() {
        let key = "dGhlIHNhbXBsZSBub25jZQ=="
        #expect(WebSocketHandshake.isValidKey(key))
        #expect(WebSocketHandshake.acceptValue(forKey: key) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(Base64.encode(SHA1.hash([UInt8](key + WebSocketHandshake.guid))) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
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
