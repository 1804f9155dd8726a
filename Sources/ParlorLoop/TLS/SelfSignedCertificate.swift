import COpenSSL
import Foundation

/// A self-signed certificate for a LAN: browsers allow the microphone only on HTTPS (or localhost), so talking
/// across a LAN needs TLS even without a domain. Made once in the data directory and reused.
public enum SelfSignedCertificate {
    /// The certificate and key paths in `directory`, creating them (for this machine's addresses) if missing.
    public static func ensure(in directory: String) throws(TLSError) -> (certificate: String, key: String) {
        let certificate = directory + "/tls-cert.pem"
        let key = directory + "/tls-key.pem"
        let manager = FileManager.default
        if manager.fileExists(atPath: certificate), manager.fileExists(atPath: key) { return (certificate, key) }
        do {
            try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw TLSError(description: "cannot create \(directory): \(error)")
        }
        let names = (["DNS:localhost", "IP:127.0.0.1"] + localAddresses().map { "IP:\($0)" }).joined(separator: ",")
        guard parlor_write_self_signed(certificate, key, "Parlor", names, 825) == 1 else {
            throw .openSSL("cannot create a self-signed certificate in \(directory)")
        }
        return (certificate, key)
    }

    /// This machine's IPv4 addresses other than loopback, so the certificate names them.
    public static func localAddresses() -> [String] {
        var addresses: [String] = []
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return [] }
        defer { freeifaddrs(list) }
        var entry = list
        while let interface = entry {
            entry = interface.pointee.ifa_next
            guard let address = interface.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            guard getnameinfo(address, socklen_t(MemoryLayout<sockaddr_in>.size), &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else { continue }
            let text = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !text.hasPrefix("127.") { addresses.append(text) }
        }
        return addresses
    }
}
