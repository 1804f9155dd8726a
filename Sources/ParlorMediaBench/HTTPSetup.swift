import Foundation

/// POST /auth, POST /rooms (and POST /rooms/ID/recordings) over one blocking keep-alive connection: the unmeasured setup.
final class HTTPSetup {
    private let port: Int
    private var socket: BlockingSocket?

    init(port: Int) { self.port = port }

    /// A token for the user `name`.
    func token(name: String) throws -> String {
        let body = try request("POST", "/auth", body: ["name": name], bearer: nil, expect: 200)
        guard let jwt = body["jwt"] as? String else { throw BenchError("POST /auth: no jwt") }
        return jwt
    }

    /// Creates a room and returns its id.
    func createRoom(token: String, name: String) throws -> String {
        let body = try request("POST", "/rooms", body: ["display_name": name, "properties": ["ttl": 3600]], bearer: token, expect: 201)
        guard let id = body["id"] as? String else { throw BenchError("POST /rooms: no id") }
        return id
    }

    /// Starts recording the room (its creator may: issue 38's REST route); returns the recording's id.
    func startRecording(token: String, room: String) throws -> String {
        let body = try request("POST", "/rooms/\(room)/recordings", body: [:], bearer: token, expect: 201)
        guard let id = body["id"] as? String else { throw BenchError("POST /rooms/\(room)/recordings: no id") }
        return id
    }

    private func request(_ method: String, _ path: String, body: [String: Any], bearer: String?, expect: Int) throws -> [String: Any] {
        let payload = try JSONSerialization.data(withJSONObject: body)
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\nContent-Length: \(payload.count)\r\n"
        if let bearer { head += "Authorization: Bearer \(bearer)\r\n" }
        head += "\r\n"
        let socket = try self.socket ?? BlockingSocket(port: port)
        self.socket = socket
        let (status, bodyBytes) = try socket.exchange(Array(head.utf8) + Array(payload))
        guard status == expect else { throw BenchError("\(method) \(path): \(status) \(String(decoding: bodyBytes, as: UTF8.self))") }
        return (try JSONSerialization.jsonObject(with: Data(bodyBytes)) as? [String: Any]) ?? [:]
    }
}

extension BlockingSocket {
    /// Writes one HTTP/1.1 request and reads its response (Content-Length framed, or chunked as Janus's
    /// libmicrohttpd sends it): the status and the body.
    func exchange(_ request: [UInt8]) throws -> (status: Int, body: [UInt8]) {
        try write(request)
        var headEnd: Int?
        while headEnd == nil {
            headEnd = HeadScan.end(buffer)
            if headEnd == nil { try fill() }
        }
        let headText = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
        let status = Int(headText.split(separator: " ").dropFirst().first ?? "") ?? 0
        if headText.lowercased().contains("transfer-encoding: chunked") {
            buffer.removeFirst(headEnd! + 4)
            return (status, try readChunks())
        }
        let length = HeadScan.contentLength(headText)
        while buffer.count < headEnd! + 4 + length { try fill() }
        let body = Array(buffer[(headEnd! + 4)..<(headEnd! + 4 + length)])
        buffer.removeFirst(headEnd! + 4 + length)
        return (status, body)
    }

    /// A chunked body (RFC 9112 §7.1): size lines in hex, each chunk and its CRLF, until the zero chunk and the
    /// empty trailer.
    private func readChunks() throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            var lineEnd: Int?
            while lineEnd == nil {
                lineEnd = buffer.count >= 2 ? (0..<(buffer.count - 1)).first { buffer[$0] == 13 && buffer[$0 + 1] == 10 } : nil
                if lineEnd == nil { try fill() }
            }
            let sizeText = String(decoding: buffer[0..<lineEnd!], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { throw BenchError("bad chunk size \(sizeText)") }
            while buffer.count < lineEnd! + 2 + size + 2 { try fill() }
            body += buffer[(lineEnd! + 2)..<(lineEnd! + 2 + size)]
            buffer.removeFirst(lineEnd! + 2 + size + 2)  // a zero chunk's "CRLF" is the end of its (empty) trailer
            if size == 0 { return body }
        }
    }
}

enum HeadScan {
    /// Index of the "\r\n\r\n" that ends an HTTP head.
    static func end(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    static func contentLength(_ head: String) -> Int {
        for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
            return Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
        }
        return 0
    }
}
