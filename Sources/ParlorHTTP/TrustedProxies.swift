#if canImport(Glibc)
import Glibc
#endif

/// An IP address as 16 bytes (IPv4 as its IPv4-mapped IPv6 form), so one comparison covers both families.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// Parses a bare IPv4 or IPv6 address (no brackets, no port); nil for anything else.
    public init?(_ text: some StringProtocol) {
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        let string = String(text)
        if string.contains(":") {
            var address = in6_addr()
            guard inet_pton(AF_INET6, string, &address) == 1 else { return nil }
            bytes = withUnsafeBytes(of: &address) { Array($0) }
        } else {
            var address = in_addr()
            guard inet_pton(AF_INET, string, &address) == 1 else { return nil }
            bytes = Array(repeating: 0, count: 10) + [0xFF, 0xFF] + withUnsafeBytes(of: &address) { Array($0) }
        }
    }

    public var isIPv4: Bool { bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF }

    /// The canonical text (IPv4-mapped addresses as plain IPv4), so one client always counts under one key.
    public var description: String {
        if isIPv4 { return bytes[12..<16].map { String($0) }.joined(separator: ".") }
        var address = in6_addr()
        withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        _ = inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count))
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// One CIDR block, e.g. 10.0.0.0/8 or ::1/128 (a bare address is a /32 or /128).
public struct IPNetwork: Sendable, Equatable {
    let base: [UInt8]
    /// Prefix length over the 16-byte form (an IPv4 /8 is a /104 here).
    let prefixLength: Int

    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = IPAddress(parts[0]) else { return nil }
        let width = address.isIPv4 ? 32 : 128
        var length = width
        if parts.count == 2 {
            guard parts[1].count <= 3, parts[1].allSatisfy(\.isASCII), let value = Int(parts[1]), (0...width).contains(value) else { return nil }
            length = value
        }
        prefixLength = length + (address.isIPv4 ? 96 : 0)
        base = Self.masked(address.bytes, prefixLength)
    }

    public func contains(_ address: IPAddress) -> Bool { Self.masked(address.bytes, prefixLength) == base }

    private static func masked(_ bytes: [UInt8], _ prefix: Int) -> [UInt8] {
        var out = bytes
        for index in 0..<16 {
            let bits = max(0, min(8, prefix - index * 8))
            out[index] &= bits == 8 ? 0xFF : UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
        }
        return out
    }
}

/// The peers whose forwarding headers are believed (`--trusted-proxies`).
public struct TrustedProxies: Sendable, Equatable {
    public var networks: [IPNetwork]

    public init(_ networks: [IPNetwork]) { self.networks = networks }

    /// 127.0.0.0/8 and ::1/128: a proxy on the same machine.
    public static let loopback = TrustedProxies([IPNetwork("127.0.0.0/8")!, IPNetwork("::1/128")!])
    public static let none = TrustedProxies([])

    /// A comma-separated CIDR list; "" or "none" trusts nobody. Nil when an entry is not a CIDR block.
    public init?(list: String) {
        let entries = list.split(separator: ",").map { $0.trimmingCharacters(in: " \t") }.filter { !$0.isEmpty }
        if entries == ["none"] || entries.isEmpty {
            networks = []
            return
        }
        var networks: [IPNetwork] = []
        for entry in entries {
            guard let network = IPNetwork(entry) else { return nil }
            networks.append(network)
        }
        self.networks = networks
    }

    public var isEmpty: Bool { networks.isEmpty }

    public func contains(_ address: IPAddress) -> Bool { networks.contains { $0.contains(address) } }

    public func contains(ip: String) -> Bool {
        guard !networks.isEmpty, let address = IPAddress(ip) else { return false }
        return contains(address)
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> Substring {
        var text = self
        while let first = text.first, set.contains(first) { text = text.dropFirst() }
        while let last = text.last, set.contains(last) { text = text.dropLast() }
        return text
    }
}
