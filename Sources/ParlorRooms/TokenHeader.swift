import ParlorProtocol

/// The checks on a token's JOSE header (RFC 7515 §4.1), made on its bytes before libjwt sees the token.
enum TokenHeader {
    /// Refuses every header but a JSON object naming `"alg":"HS256"` once and no critical extensions: `crit` lists
    /// extensions the recipient must understand or refuse the token (§4.1.11), and Parlor understands none.
    static func check(_ headerPart: ArraySlice<UInt8>) throws(TokenError) {
        guard let bytes = Base64URL.decode(headerPart),
              case .object(let header)? = try? JSONParser.parse(bytes, maxDepth: 4) else {
            throw TokenError(reason: "the token must be signed with HS256 (its header is not a JSON object)")
        }
        // A key given twice is read differently by different parsers: refuse rather than guess which one counts.
        var seen = Set<String>()
        for (key, _) in header.pairs where !seen.insert(key).inserted {
            throw TokenError(reason: "the token's header names \"\(key.prefix(32))\" twice")
        }
        guard case .string("HS256")? = header["alg"] else { throw TokenError(reason: "the token must be signed with HS256") }
        guard header["crit"] == nil else {
            throw TokenError(reason: "the token's header lists critical extensions (crit), which this server does not support")
        }
    }
}
