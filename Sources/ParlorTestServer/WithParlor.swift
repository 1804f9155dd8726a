import Foundation
import ParlorApp
import ParlorClient

/// An in-process Parlor server for one test, made by `withParlor`: 127.0.0.1 on a free port, an in-memory
/// database, test mode on with `adminToken`, abuse limits off, a short grace period. Linux only (the server's
/// event loop is epoll).
public final class TestParlor: Sendable {
    /// The admin token `withParlor` sets unless the configure closure changes it.
    public static let defaultAdminToken = "parlor-test-admin-token-0123456789"

    /// The running server (its `configuration`, `port`, `url`).
    public let app: ParlorApplication
    /// An HTTP client for it (auth, rooms), with quick reconnects for the sessions it opens.
    public let client: ParlorServer
    /// nil if the configure closure removed it (then `drop`/`kick` fail with 403 or 404).
    public let adminToken: String?
    private let sessions = SessionList()

    init(app: ParlorApplication, adminToken: String?, clientConfiguration: ParlorClientConfiguration) {
        self.app = app
        self.adminToken = adminToken
        var configuration = clientConfiguration
        // A server on its self-signed certificate (`tlsSelfSigned`): the client trusts exactly that certificate.
        let server = app.configuration
        if server.tlsSelfSigned, server.http.tlsCertificatePath == nil, configuration.tls.usesSystemStore {
            configuration.tls = TLSTrust(caFile: server.dataDirectory + "/tls-cert.pem")  // SelfSignedCertificate.ensure's file
        }
        client = (try? ParlorServer(url: app.url, configuration: configuration))
            ?? ParlorServer(host: "127.0.0.1", port: app.port, configuration: configuration)
    }

    public var url: URL { app.url }

    /// POST /auth as `name`, then a connected session; `withParlor` closes it at the end.
    public func session(name: String) async throws -> ParlorSession {
        let session = try await client.connect(token: try await client.auth(name: name).jwt)
        sessions.append(session)
        return session
    }

    /// POST /rooms, with the room's properties if given. A stage room needs a creator, who moderates it:
    /// `createRoom("Town hall", properties: RoomProperties(mode: .stage), creator: "alice")` logs in as alice, and
    /// `session(name: "alice")` is then that same user (the claim is kept), a moderator once joined. Others join as
    /// listeners; `setRole(_:roomID:memberID:)` moves them on and off the stage as the admin.
    public func createRoom(_ displayName: String = "Test room", name: String? = nil, properties: RoomProperties? = nil,
                           creator: String? = nil) async throws -> Room {
        var server = client
        if let creator { server.token = try await client.auth(name: creator).jwt }
        return try await server.createRoom(displayName: displayName, name: name, properties: properties)
    }

    /// The server cuts the member's connections (as a network failure would); see `ParlorServer.dropMember`.
    public func drop(roomID: String, memberID: String) async throws {
        try await client.dropMember(roomID: roomID, memberID: memberID, adminToken: adminToken ?? "")
    }

    /// Puts a member of a stage room on the stage (`.speaker`, `.moderator`) or back in the audience (`.listener`),
    /// as the admin: member:role.
    public func setRole(_ role: MemberRole, roomID: String, memberID: String) async throws {
        try await client.setRole(role, memberID: memberID, roomID: roomID, adminToken: adminToken ?? "")
    }

    /// The member is kicked (member:left reason "kicked").
    public func kick(roomID: String, memberID: String) async throws {
        try await client.kickMember(roomID: roomID, memberID: memberID, adminToken: adminToken ?? "")
    }

    func closeAll() async {
        for session in sessions.all() { await session.close() }
    }
}

/// Sessions opened through `TestParlor.session(name:)`, closed together at the end.
private final class SessionList: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var sessions: [ParlorSession] = []  // guarded by `lock`

    func append(_ session: ParlorSession) {
        lock.withLock { sessions.append(session) }
    }

    func all() -> [ParlorSession] { lock.withLock { sessions } }
}

/// Client settings for tests: 5 s timeouts and quick reconnects without jitter, so failures show fast.
extension ParlorClientConfiguration {
    public static var forTests: ParlorClientConfiguration {
        var configuration = ParlorClientConfiguration()
        configuration.connectTimeout = .seconds(5)
        configuration.requestTimeout = .seconds(5)
        configuration.reconnect = ReconnectPolicy(maxAttempts: 5, initialDelay: .milliseconds(20), maxDelay: .milliseconds(200), jitter: 0)
        return configuration
    }
}

/// Runs `body` against a fresh in-process server, then closes every session it made and stops the server,
/// also when `body` throws.
///
/// Settings: `AppConfiguration.testing()` (127.0.0.1, port 0, `:memory:`, abuse limits off) plus test mode,
/// `TestParlor.defaultAdminToken`, a 1 s grace period and empty rooms kept a day (a test suite starved of CPU can
/// leave a created room empty for more than the default 5 minutes); `configure` changes any of them.
public func withParlor<Result: Sendable>(
    _ configure: (inout AppConfiguration) -> Void = { _ in },
    client clientConfiguration: ParlorClientConfiguration = .forTests,
    _ body: (TestParlor) async throws -> Result
) async throws -> Result {
    var configuration = AppConfiguration.testing()
    configuration.testMode = true
    configuration.adminToken = TestParlor.defaultAdminToken
    configuration.rooms.gracePeriod = .seconds(1)
    configuration.rooms.defaultRoomTTL = configuration.rooms.maxRoomTTL
    configure(&configuration)
    let app = try buildApplication(configuration)
    let parlor = TestParlor(app: app, adminToken: configuration.adminToken, clientConfiguration: clientConfiguration)
    do {
        let result = try await body(parlor)
        await parlor.closeAll()
        app.shutdown()
        return result
    } catch {
        await parlor.closeAll()
        app.shutdown()
        throw error
    }
}
