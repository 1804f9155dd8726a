import Foundation

/// POST /auth and POST /rooms over one blocking keep-alive connection: the unmeasured setup.
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

    private func request(_ method: String, _ path: String, body: [String: Any], bearer: String?, expect: Int) throws -> [String: Any] {
        let payload = try JSONSerialization.data(withJSONObject: body)
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\nContent-Length: \(payload.count)\r\n"
        if let bearer { head += "Authorization: Bearer \(bearer)\r\n" }
        head += "\r\n"
        let socket = try self.socket ?? BlockingSocket(port: port)
        self.socket = socket
        try socket.write(Array(head.utf8) + Array(payload))
        var headEnd: Int?
        while headEnd == nil {
            headEnd = HeadScan.end(socket.buffer)
            if headEnd == nil { try socket.fill() }
        }
        let headText = String(decoding: socket.buffer[0..<headEnd!], as: UTF8.self)
        let status = Int(headText.split(separator: " ").dropFirst().first ?? "") ?? 0
        let length = HeadScan.contentLength(headText)
        while socket.buffer.count < headEnd! + 4 + length { try socket.fill() }
        let bodyBytes = Array(socket.buffer[(headEnd! + 4)..<(headEnd! + 4 + length)])
        socket.buffer.removeFirst(headEnd! + 4 + length)
        guard status == expect else { throw BenchError("\(method) \(path): \(status) \(String(decoding: bodyBytes, as: UTF8.self))") }
        return (try JSONSerialization.jsonObject(with: Data(bodyBytes)) as? [String: Any]) ?? [:]
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
