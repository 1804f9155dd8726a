/// Decoding of an origin-form request-target ("/path?query") into a path and query parameters.
enum RequestTarget {
    /// Splits and percent-decodes `target`; throws 400 for bad escapes or text that is not UTF-8.
    static func decode(_ target: ArraySlice<UInt8>) throws(HTTPParseError) -> (path: String, query: [String: String]) {
        let questionMark = target.firstIndex(of: ASCII.question)
        let path = try percentDecoded(target[..<(questionMark ?? target.endIndex)], plusAsSpace: false, what: "path")
        var query: [String: String] = [:]
        if let questionMark {
            for pair in target[(questionMark + 1)...].split(separator: ASCII.ampersand) {
                let equals = pair.firstIndex(of: ASCII.equals)
                let name = try percentDecoded(pair[..<(equals ?? pair.endIndex)], plusAsSpace: true, what: "query")
                var value = ""
                if let equals {
                    value = try percentDecoded(pair[(equals + 1)...], plusAsSpace: true, what: "query")
                }
                query[name] = value
            }
        }
        return (path, query)
    }

    /// Decodes %XX escapes (and "+" as space in queries, per HTML form encoding) into UTF-8 text.
    static func percentDecoded(
        _ bytes: ArraySlice<UInt8>, plusAsSpace: Bool, what: String
    ) throws(HTTPParseError) -> String {
        // Fast path: nothing to decode, and request-target bytes are already checked to be visible ASCII.
        if !bytes.contains(where: { $0 == ASCII.percent || (plusAsSpace && $0 == ASCII.plus) }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == ASCII.percent {
                guard index + 2 < bytes.endIndex,
                      let high = ASCII.hexValue(bytes[index + 1]),
                      let low = ASCII.hexValue(bytes[index + 2]) else {
                    throw .malformed("The \(what) contains an invalid percent-escape.")
                }
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(plusAsSpace && byte == ASCII.plus ? ASCII.space : byte)
                index += 1
            }
        }
        guard UTF8Validator.isValid(decoded) else {
            throw .malformed("The percent-decoded \(what) is not valid UTF-8.")
        }
        return String(decoding: decoded, as: UTF8.self)
    }
}
