/// A certificate fingerprint as SDP's `a=fingerprint` carries it (RFC 8122 §5): the hash function and the digest,
/// written as colon-separated uppercase hex pairs.
public struct DTLSFingerprint: Sendable, Hashable, CustomStringConvertible {
    /// Lowercase, as in the SDP: "sha-256".
    public var algorithm: String
    public var digest: [UInt8]

    public init(algorithm: String, digest: [UInt8]) {
        self.algorithm = algorithm.lowercased()
        self.digest = digest
    }

    /// Parses the attribute's value: "sha-256 3B:93:…".
    public init?(sdpValue: Substring) {
        let parts = sdpValue.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2 else { return nil }
        var digest: [UInt8] = []
        for pair in parts[1].split(separator: ":", omittingEmptySubsequences: false) {
            guard pair.count == 2, let byte = UInt8(pair, radix: 16) else { return nil }
            digest.append(byte)
        }
        guard !digest.isEmpty, digest.count <= 64 else { return nil }
        self.init(algorithm: String(parts[0]), digest: digest)
    }

    /// The hash functions the DTLS handshake can check a peer's certificate with, strongest first, and their digest
    /// lengths. Others (sha-1, md5) are parsed but never chosen.
    public static let verifiableAlgorithms: [(name: String, length: Int)] = [("sha-512", 64), ("sha-384", 48), ("sha-256", 32)]

    /// Whether the handshake can check this one: a hash function we have, with a digest of its length.
    public var isVerifiable: Bool { Self.verifiableAlgorithms.contains { $0.name == algorithm && $0.length == digest.count } }

    /// The strongest verifiable fingerprint of `fingerprints` (an SDP may list one per hash function, RFC 8122 §5).
    public static func strongestVerifiable(in fingerprints: [DTLSFingerprint]) -> DTLSFingerprint? {
        for (name, _) in verifiableAlgorithms {
            if let match = fingerprints.first(where: { $0.algorithm == name && $0.isVerifiable }) { return match }
        }
        return nil
    }

    /// "3B:93:58:…".
    public var hex: String {
        digest.map { byte in
            let text = String(byte, radix: 16, uppercase: true)
            return byte < 16 ? "0" + text : text
        }.joined(separator: ":")
    }

    /// The attribute's value: "sha-256 3B:93:…".
    public var sdpValue: String { "\(algorithm) \(hex)" }
    public var description: String { sdpValue }
}
