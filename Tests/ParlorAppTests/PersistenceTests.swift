#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import ParlorApp
import ParlorRooms

/// What survives a restart on the same data directory: users, rooms, and (with a generated secret) tokens.
@Suite struct PersistenceTests {
    /// A file database in `directory`, optionally with the JWT secret generated there.
    static func onDisk(_ directory: String, generatedSecret: Bool = false) -> (inout AppConfiguration) -> Void {
        { configuration in
            configuration.dataDirectory = directory
            configuration.databasePath = directory + "/parlor.db"
            if generatedSecret { configuration.jwtSecret = nil }
        }
    }

    @Test func usersAndRoomsSurviveARestart() throws {
        try withTemporaryDirectory { directory in
            let (userID, roomID) = try withServer(Self.onDisk(directory)) { app in
                let auth = try http(app, "POST", "/auth", json: #"{"name":"alice"}"#)
                let userID = try #require(auth.object["user_id"] as? String)
                return (userID, try createRoom(app, "Survivor"))
            }
            #expect(FileManager.default.fileExists(atPath: directory + "/parlor.db"))

            try withServer(Self.onDisk(directory)) { app in
                let auth = try http(app, "POST", "/auth", json: #"{"name":"alice"}"#)
                #expect(auth.object["user_id"] as? String == userID, "the same name is the same user after a restart")
                let rooms = try http(app, "GET", "/rooms").array
                #expect(rooms.compactMap { $0["id"] as? String } == [roomID])
                #expect(rooms.first?["display_name"] as? String == "Survivor")
                #expect(try http(app, "GET", "/rooms/\(roomID)").status == 200)
                let bob = try http(app, "POST", "/auth", json: #"{"name":"bob"}"#)
                #expect(bob.object["user_id"] as? String != userID)
            }
        }
    }

    @Test func generatedSecretIsKeptWithMode0600AndTokensSurviveARestart() throws {
        try withTemporaryDirectory { directory in
            let secretPath = directory + "/" + SecretFile.fileName
            let (jwt, userID) = try withServer(Self.onDisk(directory, generatedSecret: true)) { app in
                let auth = try http(app, "POST", "/auth", json: #"{"name":"alice"}"#)
                return (try #require(auth.object["jwt"] as? String), try #require(auth.object["user_id"] as? String))
            }
            var info = stat()
            #expect(stat(secretPath, &info) == 0, "\(secretPath) must exist")
            #expect(info.st_mode & 0o777 == 0o600)
            let firstSecret = try String(contentsOfFile: secretPath, encoding: .utf8)
            let secretBytes = try #require(Self.hexDecode(firstSecret.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(secretBytes.count >= 32)
            let claims = try TokenService(secret: secretBytes, timeToLiveSeconds: 3600).verify(jwt)
            #expect(claims.subject == "alice", "the token was signed with the secret in the file")

            try withServer(Self.onDisk(directory, generatedSecret: true)) { app in
                let rooms = try http(app, "GET", "/rooms", token: jwt)
                #expect(rooms.status == 200, "a token from before the restart is still valid: \(rooms.text)")
                let created = try http(app, "POST", "/rooms", json: #"{"display_name":"After"}"#, token: jwt)
                #expect(created.object["created_by"] as? String == userID)
                let socket = try TestWebSocket(port: app.port, token: jwt)
                #expect(socket.userID == userID)
            }
            #expect(try String(contentsOfFile: secretPath, encoding: .utf8) == firstSecret, "the secret is not regenerated")
        }
    }

    @Test func tokensFromAnotherDataDirectoryAreRefused() throws {
        try withTemporaryDirectory { directory in
            let jwt = try withServer(Self.onDisk(directory + "/one", generatedSecret: true)) { try token($0, "alice") }
            try withServer(Self.onDisk(directory + "/two", generatedSecret: true)) { app in
                _ = expectProblem(try http(app, "GET", "/rooms", token: jwt), 401, "auth:error:invalid-token")
            }
        }
    }

    @Test func inMemoryRunWritesNoFiles() throws {
        try withTemporaryDirectory { directory in
            let dataDirectory = directory + "/data"
            try withServer({
                $0.dataDirectory = dataDirectory
                $0.databasePath = ":memory:"
                $0.jwtSecret = nil
            }) { app in
                let jwt = try token(app, "alice")
                #expect(try http(app, "GET", "/rooms", token: jwt).status == 200)
            }
            #expect(!FileManager.default.fileExists(atPath: dataDirectory))
        }
    }

    static func hexDecode(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
