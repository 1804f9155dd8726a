#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address and UDP port as a plain value: hashable, so a media session can be found by the address a
/// datagram came from, and convertible to and from the `sockaddr` the socket calls take.
public struct TransportAddress: Hashable, Sendable, CustomStringConvertible {
    public enum IP: Hashable, Sendable {
        /// In host order: 127.0.0.1 is 0x7F00_0001.
        case v4(UInt32)
        /// The 16 bytes in network order, as two big-endian halves.
        case v6(high: UInt64, low: UInt64)
    }

    public var ip: IP
    public var port: UInt16

    public init(ip: IP, port: UInt16) {
        self.ip = ip
        self.port = port
    }

    /// Parses a numeric address ("192.0.2.1", "::1"); nil for anything else.
    public init?(host: String, port: UInt16) {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            self.init(ip: .v4(UInt32(bigEndian: v4.s_addr)), port: port)
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, host, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        self.init(ip: .v6(high: bytes.uint64(at: 0), low: bytes.uint64(at: 8)), port: port)
    }

    /// The address's bytes in network order (4 or 16).
    public var addressBytes: [UInt8] {
        var bytes: [UInt8] = []
        switch ip {
        case .v4(let value): bytes.appendUInt32(value)
        case .v6(let high, let low):
            bytes.appendUInt64(high)
            bytes.appendUInt64(low)
        }
        return bytes
    }

    public var isIPv6: Bool { if case .v6 = ip { true } else { false } }

    /// The address without the port, as SDP and logs write it.
    public var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        var bytes = addressBytes
        _ = inet_ntop(isIPv6 ? AF_INET6 : AF_INET, &bytes, &text, socklen_t(text.count))
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Reads a `sockaddr_in` or `sockaddr_in6`; nil for other families.
    public init?(storage: sockaddr_storage) {
        switch Int32(storage.ss_family) {
        case AF_INET:
            let v4 = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in.self) }
            self.init(ip: .v4(UInt32(bigEndian: v4.sin_addr.s_addr)), port: UInt16(bigEndian: v4.sin_port))
        case AF_INET6:
            let v6 = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self) }
            let bytes = withUnsafeBytes(of: v6.sin6_addr) { Array($0) }
            self.init(ip: .v6(high: bytes.uint64(at: 0), low: bytes.uint64(at: 8)), port: UInt16(bigEndian: v6.sin6_port))
        default:
            return nil
        }
    }

    /// The `sockaddr` for `sendto`/`sendmmsg`/`bind`, and its length.
    public var storage: (sockaddr_storage, socklen_t) {
        var storage = sockaddr_storage()
        switch ip {
        case .v4(let value):
            var v4 = sockaddr_in()
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            v4.sin_addr.s_addr = value.bigEndian
            withUnsafeMutableBytes(of: &storage) { dst in withUnsafeBytes(of: v4) { dst.copyMemory(from: $0) } }
            return (storage, socklen_t(MemoryLayout<sockaddr_in>.size))
        case .v6:
            var v6 = sockaddr_in6()
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            let bytes = addressBytes
            withUnsafeMutableBytes(of: &v6.sin6_addr) { $0.copyBytes(from: bytes) }
            withUnsafeMutableBytes(of: &storage) { dst in withUnsafeBytes(of: v6) { dst.copyMemory(from: $0) } }
            return (storage, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
    }
}
