import Foundation
import ParlorApp
import ParlorLoop

/// Starts Parlor in-process on 127.0.0.1, port 0, with an in-memory database, and stops it after `body`.
func withServer<T>(_ configure: (inout AppConfiguration) -> Void = { _ in },
                   _ body: (ParlorApplication) throws -> T) throws -> T {
    var configuration = AppConfiguration.testing()
    configure(&configuration)
    let app = try buildApplication(configuration)
    defer { app.shutdown() }
    return try body(app)
}

/// One HTTP request on a fresh connection.
func http(_ app: ParlorApplication, _ method: String, _ path: String, json: String? = nil,
          headers: [String: String] = [:]) throws -> TestResponse {
    try RawConnection.oneRequest(app.port, method, path, json: json, headers: headers)
}

/// POST /auth for `name`; returns the JWT. Like the web client, it keeps the claim secret each answer carries (per
/// server and name) and sends it next time, so a test's repeated /auth for a name is the same person coming back.
func token(_ app: ParlorApplication, _ name: String) throws -> String {
    let key = "\(app.port) \(name)"
    let grant = try auth(port: app.port, name: name, claim: keptClaims.withLock { $0[key] })
    keptClaims.withLock { $0[key] = grant.claim }
    return grant.jwt
}

/// What POST /auth grants: the token, the claim secret that proves the identity next time, and the user id.
struct AuthGrant {
    let jwt: String
    let claim: String
    let userID: String
}

/// POST /auth for `name` on the server at `port`, presenting `claim` when given.
func auth(port: Int, name: String, claim: String? = nil) throws -> AuthGrant {
    let connection = try RawConnection(port: port)
    let body = claim.map { #"{"name":"\#(name)","claim":"\#($0)"}"# } ?? #"{"name":"\#(name)"}"#
    try connection.send("POST /auth HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\n"
                        + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
    let response = try connection.readResponse()
    guard response.status == 200, let jwt = response.object["jwt"] as? String, let claim = response.object["claim"] as? String,
          let userID = response.object["user_id"] as? String else {
        throw TestFailure("auth failed: \(response.status) \(response.text)")
    }
    return AuthGrant(jwt: jwt, claim: claim, userID: userID)
}

private let keptClaims = Locked<[String: String]>([:])

/// POST /rooms; returns the room id.
func createRoom(_ app: ParlorApplication, _ displayName: String = "Test room", properties: String? = nil) throws -> String {
    let body = properties.map { #"{"display_name":"\#(displayName)","properties":\#($0)}"# } ?? #"{"display_name":"\#(displayName)"}"#
    let response = try http(app, "POST", "/rooms", json: body)
    guard response.status == 201, let id = response.object["id"] as? String else {
        throw TestFailure("create room failed: \(response.status) \(response.text)")
    }
    return id
}

/// A fresh room that alice and bob (in that order) have joined; the usual start of a two-member scenario.
struct TwoMembers {
    let room: String
    let alice: TestWebSocket
    let bob: TestWebSocket
    let aliceMember: String
    let bobMember: String

    init(_ app: ParlorApplication) throws {
        room = try createRoom(app)
        alice = try TestWebSocket(app, name: "alice")
        bob = try TestWebSocket(app, name: "bob")
        guard let aliceMember = try alice.join(room)["member_id"] as? String,
              let bobMember = try bob.join(room)["member_id"] as? String else { throw TestFailure("a join returned no member_id") }
        self.aliceMember = aliceMember
        self.bobMember = bobMember
    }
}
