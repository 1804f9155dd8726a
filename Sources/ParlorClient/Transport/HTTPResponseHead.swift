import ParlorCodec

/// The status line and headers of an HTTP/1.1 response, parsed from the bytes before the first empty line.
struct HTTPResponseHead: Sendable {
    static let maxHeadBytes = 64 * 1024

    let status: Int
    let headers: HTTPHeaders

    /// The head at the front of `buffer` and how many bytes it took; nil while the empty line has not arrived.
    static func parse(_ buffer: [UInt8]) throws(ParlorError) -> (head: HTTPResponseHead, length: Int)? {
        guard let end = headEnd(in: buffer) else {
            guard buffer.count <= maxHeadBytes else { throw .invalidResponse("response head is over \(maxHeadBytes) bytes") }
            return nil
        }
        let text = String(decoding: buffer[..<end], as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
            throw .invalidResponse("not an HTTP/1.x status line: \(lines.first.map(String.init) ?? text)")
        }
        var headers = HTTPHeaders()
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw .invalidResponse("malformed header line: \(line)") }
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            headers.add(String(line[..<colon]), String(value.reversed().drop { $0 == " " || $0 == "\t" }.reversed()))
        }
        return (HTTPResponseHead(status: status, headers: headers), end + 4)
    }

    /// Offset of the CRLFCRLF that ends the head.
    private static func headEnd(in buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4)
        where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// Content-Length, or nil when absent; throws when present but not a number.
    func contentLength() throws(ParlorError) -> Int? {
        guard let text = headers["Content-Length"] else { return nil }
        guard let length = Int(text), length >= 0 else { throw .invalidResponse("bad Content-Length \(text)") }
        return length
    }
}
