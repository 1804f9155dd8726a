#if canImport(Glibc)
import Glibc
#endif

/// The unit per-address abuse limits count: an IPv4 address, or the /64 network of an IPv6 address (one host is
/// usually given a whole /64, so counting single IPv6 addresses would give it 2⁶⁴ allowances).
public enum ClientAddress {
    public static func limitKey(_ ip: String) -> String {
        guard ip.contains(":") else { return ip }
        var address = in6_addr()
        guard inet_pton(AF_INET6, ip, &address) == 1 else { return ip }
        let bytes = withUnsafeBytes(of: &address) { Array($0) }
        // An IPv4-mapped address (::ffff:a.b.c.d) is that IPv4 client.
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return bytes[12..<16].map { String($0) }.joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}
