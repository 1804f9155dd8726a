import Testing
@testable import ParlorMediaLink

/// Known answers from the RFCs, through ParlorMediaLink's own functions. Each fails if a byte of the expected
/// value changes.
@Suite struct MediaLinkVectorTests {
    /// RFC 7748 §5.2: the two single scalar multiplications. The second u-coordinate has its top bit set, which
    /// X25519 must ignore.
    @Test func rfc7748Section5_2ScalarMultiplication() throws {
        let cases = [
            ("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
             "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
             "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552"),
            ("4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
             "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493",
             "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957"),
        ]
        for (scalar, u, expected) in cases {
            let pair = try X25519KeyPair(privateKey: hexBytes(scalar))
            #expect(try pair.sharedSecret(withPeer: hexBytes(u)) == hexBytes(expected))
        }
    }

    /// RFC 7748 §5.2, iterated: k = u = 9, then k, u = X25519(k, u), k. After 1 and 1,000 iterations (the RFC's
    /// 1,000,000 would take minutes).
    @Test func rfc7748Section5_2Iterated() throws {
        var k = [UInt8](repeating: 0, count: 32)
        k[0] = 9
        var u = k
        for iteration in 1...1000 {
            let next = try X25519KeyPair(privateKey: k).sharedSecret(withPeer: u)
            u = k
            k = next
            if iteration == 1 { #expect(k == hexBytes("422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079")) }
        }
        #expect(k == hexBytes("684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51"))
    }

    /// RFC 7748 §6.1: Alice's and Bob's public keys from their private keys, and the secret both compute.
    @Test func rfc7748Section6_1DiffieHellman() throws {
        let alice = try X25519KeyPair(privateKey: hexBytes("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"))
        let bob = try X25519KeyPair(privateKey: hexBytes("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"))
        #expect(alice.publicKey == hexBytes("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"))
        #expect(bob.publicKey == hexBytes("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"))
        let shared = hexBytes("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
        #expect(try alice.sharedSecret(withPeer: bob.publicKey) == shared)
        #expect(try bob.sharedSecret(withPeer: alice.publicKey) == shared)
    }

    /// RFC 7748 §6.1's check: a low-order peer point gives the all-zero secret, which is refused. u = 0, u = 1, the
    /// two points of order 8, p (u = 0 unreduced) and p - 1 (order 2).
    @Test func allZeroSharedSecretIsRefused() throws {
        let pair = try X25519KeyPair()
        let lowOrder = [
            [UInt8](repeating: 0, count: 32),
            [1] + [UInt8](repeating: 0, count: 31),
            hexBytes("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800"),
            hexBytes("5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157"),
            hexBytes("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
            hexBytes("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
        ]
        for point in lowOrder {
            #expect(thrownError { () throws(MediaLinkCryptoError) in try pair.sharedSecret(withPeer: point) } == .allZeroSharedSecret)
        }
        #expect(thrownError { () throws(MediaLinkCryptoError) in try pair.sharedSecret(withPeer: [1, 2, 3]) }
            == .wrongKeyLength(expected: 32, got: 3))
        #expect(thrownError { () throws(MediaLinkCryptoError) in try X25519KeyPair(privateKey: []) } == .wrongKeyLength(expected: 32, got: 0))
    }

    @Test func freshKeyPairsDifferAndAgree() throws {
        let a = try X25519KeyPair(), b = try X25519KeyPair()
        #expect(a.publicKey.count == 32)
        #expect(a.publicKey != b.publicKey)
        #expect(try a.sharedSecret(withPeer: b.publicKey) == b.sharedSecret(withPeer: a.publicKey))
    }

    /// RFC 5869 Appendix A, test cases 1–3 (HKDF-SHA256): basic, long inputs and output (three expand blocks),
    /// and no salt or info.
    @Test func rfc5869HKDFSHA256() {
        let ikm = [UInt8](repeating: 0x0b, count: 22)
        #expect(HKDFSHA256.derive(inputKeyingMaterial: ikm, salt: hexBytes("000102030405060708090a0b0c"),
                                  info: hexBytes("f0f1f2f3f4f5f6f7f8f9"), length: 42)
            == hexBytes("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"))
        #expect(HKDFSHA256.derive(inputKeyingMaterial: (0x00...0x4f).map { UInt8($0) }, salt: (0x60...0xaf).map { UInt8($0) },
                                  info: (0xb0...0xff).map { UInt8($0) }, length: 82)
            == hexBytes("""
                b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c
                59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71
                cc30c58179ec3e87c14c01d5c1f3434f1d87
                """))
        #expect(HKDFSHA256.derive(inputKeyingMaterial: ikm, salt: [], info: [], length: 42)
            == hexBytes("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"))
        // Out of RFC 5869's range: refused, not truncated.
        #expect(HKDFSHA256.derive(inputKeyingMaterial: ikm, salt: [], info: [], length: 255 * 32 + 1) == nil)
        #expect(HKDFSHA256.derive(inputKeyingMaterial: ikm, salt: [], info: [], length: 0) == nil)
    }

    /// RFC 4231 §4.2–4.8, HMAC-SHA-256 (case 5 truncates the output to 128 bits).
    @Test func rfc4231HMACSHA256() {
        let aa131 = [UInt8](repeating: 0xaa, count: 131)
        let cases: [(key: [UInt8], data: [UInt8], mac: String)] = [
            ([UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
             "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
            (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
             "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
            ([UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50),
             "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
            ((0x01...0x19).map { UInt8($0) }, [UInt8](repeating: 0xcd, count: 50),
             "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
            ([UInt8](repeating: 0x0c, count: 20), Array("Test With Truncation".utf8), "a3b6167473100ee06e0c796c2955552b"),
            (aa131, Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
             "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
            (aa131, Array(("This is a test using a larger than block-size key and a larger than block-size data. The key needs to "
                + "be hashed before being used by the HMAC algorithm.").utf8),
             "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
        ]
        for (number, testCase) in cases.enumerated() {
            let expected = hexBytes(testCase.mac)
            let mac = HMACSHA256.authenticate(testCase.data, key: testCase.key)
            #expect(mac?.count == 32, "case \(number + 1)")
            #expect(mac.map { Array($0.prefix(expected.count)) } == expected, "case \(number + 1)")
        }
    }

    @Test func constantTimeEqualCompares() {
        #expect(OpenSSLBytes.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!OpenSSLBytes.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!OpenSSLBytes.constantTimeEqual([1, 2, 3], [1, 2]))
        #expect(OpenSSLBytes.constantTimeEqual([], []))
    }
}
