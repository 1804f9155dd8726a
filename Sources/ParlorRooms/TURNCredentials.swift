import COpenSSL
import ParlorCodec
import ParlorProtocol

/// Time-limited TURN credentials in coturn's REST-API scheme (`use-auth-secret` / `static-auth-secret`): the
/// username is `<expiry unix seconds>:<user id>` and the credential is base64(HMAC-SHA1(secret, username)). The TURN
/// server recomputes the HMAC with the shared secret and refuses expired usernames, so browsers never hold a
/// long-lived TURN password and a leaked credential stops working on its own.
public struct TURNCredentials: Sendable, Equatable {
    public var secret: [UInt8]
    /// turn: and turns: URLs of the TURN server(s) sharing `secret`.
    public var urls: [String]
    /// Seconds a credential stays valid; clients get fresh ones on every session:success and session:resume.
    public var timeToLiveSeconds: Int64

    public init(secret: [UInt8], urls: [String], timeToLiveSeconds: Int64) {
        self.secret = secret
        self.urls = urls
        self.timeToLiveSeconds = timeToLiveSeconds
    }

    /// The ICE server entry for `userID`, valid from `now` (unix seconds) for `timeToLiveSeconds`.
    public func server(for userID: String, now: Int64 = Timestamp.nowMilliseconds() / 1000) -> ICEServer {
        let username = "\(now + timeToLiveSeconds):\(userID)"
        return ICEServer(urls: urls, username: username, credential: Self.credential(for: username, secret: secret))
    }

    /// base64(HMAC-SHA1(secret, username)), what coturn computes to check the password.
    public static func credential(for username: String, secret: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let message = Array(username.utf8)
        _ = secret.withUnsafeBytes { key in
            message.withUnsafeBytes { data in
                HMAC(EVP_sha1(), key.baseAddress, Int32(key.count), data.baseAddress?.assumingMemoryBound(to: UInt8.self),
                     data.count, &digest, &length)
            }
        }
        return Base64.encode(Array(digest.prefix(Int(length))))
    }
}

extension RoomsConfiguration {
    /// `ice_servers` for a session:success or session:resume reply: the static servers, then fresh TURN
    /// credentials for the user when a shared secret is configured.
    func iceServersJSON(for userID: String) -> JSONValue {
        let servers = iceServers + (turn.map { [$0.server(for: userID)] } ?? [])
        return .array(servers.map { server in
            var entry: JSONObject = ["urls": .array(server.urls.map { .string($0) })]
            if let username = server.username { entry["username"] = .string(username) }
            if let credential = server.credential { entry["credential"] = .string(credential) }
            return .object(entry)
        })
    }
}
