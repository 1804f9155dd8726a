import Foundation

extension ServerProcess {
    /// The UDP media port, from `parlor serve`'s second line ("media on udp port N, …"). Call once, right after init.
    func readMediaPort() throws -> UInt16 {
        let line = try child.readLine()
        let prefix = "media on udp port "
        guard line.hasPrefix(prefix), let port = UInt16(line.dropFirst(prefix.count).prefix { $0.isNumber }) else {
            throw TestFailure("no media port in: \(line)")
        }
        return port
    }

    /// One sample of /metrics (`--admin-token admin`), or 0 when it is not there.
    func metric(_ sample: String, admin: String) throws -> Int {
        let response = try RawConnection.oneRequest(port, "GET", "/metrics", headers: ["Authorization": "Bearer \(admin)"])
        let line = String(decoding: response.body, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix(sample + " ") }
        return line.flatMap { Int($0.dropFirst(sample.count + 1)) } ?? 0
    }
}
