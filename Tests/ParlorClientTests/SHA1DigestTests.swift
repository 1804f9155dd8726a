import ParlorCodec
import Testing
@testable import ParlorClient

/// The client's SHA-1 comes from the platform's library (OpenSSL here); these check that it is wired up right.
@Suite struct SHA1DigestTests {
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    // FIPS 180-2's examples and the empty message.
    @Test(arguments: [
        ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
    ])
    func knownVectors(input: String, digest: String) {
        #expect(Self.hex(SHA1Digest.hash(Array(input.utf8))) == digest)
    }

    @Test func aMillionAs() {
        #expect(Self.hex(SHA1Digest.hash([UInt8](repeating: 0x61, count: 1_000_000))) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    /// RFC 6455 §1.3's example: the key "dGhlIHNhbXBsZSBub25jZQ==" is answered with "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=".
    @Test func rfc6455AcceptValue() {
        #expect(WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==", sha1: SHA1Digest.hash)
                == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }
}
