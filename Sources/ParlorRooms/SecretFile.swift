#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ParlorCodec

/// Where the JWT secret comes from: PARLOR_JWT_SECRET, or a random 256-bit secret created once in the data
/// directory with mode 0600 so tokens survive restarts. The webhook signing secret is kept the same way, in a file
/// of its own: a webhook receiver must never hold the key that mints tokens.
public enum SecretFile {
    public static let fileName = "jwt-secret"
    public static let webhookFileName = "webhook-secret"

    public static func random(byteCount: Int = 32) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: byteCount)
        // One getrandom(2) for the whole secret (glibc's arc4random_buf): UInt8.random with SystemRandomNumberGenerator
        // made one system call per byte, 32 per POST /auth inside its write transaction.
        bytes.withUnsafeMutableBytes { arc4random_buf($0.baseAddress!, $0.count) }
        return bytes
    }

    /// Reads the secret kept in `directory`, creating it (and the directory) on first use.
    public static func loadOrCreate(in directory: String, fileName: String = fileName) throws -> [UInt8] {
        let path = directory + "/" + fileName
        let manager = FileManager.default
        if let data = manager.contents(atPath: path) {
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let bytes = hexDecode(text), bytes.count >= 32 else {
                throw SecretError(message: "\(path) does not hold a hex secret of at least 32 bytes; remove it to generate a new one")
            }
            return bytes
        }
        try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let secret = random()
        let hex = Hex.encode(secret) + "\n"
        // O_EXCL: if another process created it meanwhile, fail rather than overwrite a secret in use.
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SecretError(message: "cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(hex.utf8)
        guard write(fd, bytes, bytes.count) == bytes.count, fsync(fd) == 0 else {
            throw SecretError(message: "cannot write \(path): \(String(cString: strerror(errno)))")
        }
        return secret
    }

    static func hexDecode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(chars.count / 2)
        var index = 0
        while index < chars.count {
            guard let high = hexValue(chars[index]), let low = hexValue(chars[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: c - 0x30
        case 0x61...0x66: c - 0x61 + 10
        case 0x41...0x46: c - 0x41 + 10
        default: nil
        }
    }
}

public struct SecretError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
