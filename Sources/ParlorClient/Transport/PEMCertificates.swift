import Foundation

/// The certificates in PEM text, as DER: Security.framework takes DER, and a CA setting that holds no certificate
/// is an error worth reporting before any connection. (OpenSSL reads PEM itself.)
enum PEMCertificates {
    static func der(in pem: [UInt8]) -> [[UInt8]] {
        let begin = "-----BEGIN CERTIFICATE-----", end = "-----END CERTIFICATE-----"
        var rest = Substring(String(decoding: pem, as: UTF8.self))
        var certificates: [[UInt8]] = []
        while let start = rest.range(of: begin), let stop = rest[start.upperBound...].range(of: end) {
            let body = String(rest[start.upperBound..<stop.lowerBound])
            if let der = Data(base64Encoded: body, options: .ignoreUnknownCharacters), !der.isEmpty {
                certificates.append(Array(der))
            }
            rest = rest[stop.upperBound...]
        }
        return certificates
    }
}
