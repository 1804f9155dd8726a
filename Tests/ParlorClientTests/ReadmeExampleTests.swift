import Testing
import ParlorApp
import ParlorClient

// The integration-test example shown in the README, compiled and run as it is written there.
@Test func bobSeesAliceJoin() async throws {
    let parlor = try ParlorApplication.inMemory()  // 127.0.0.1, free port, in-memory database
    defer { parlor.shutdown() }
    let server = try ParlorServer(url: parlor.url)
    let room = try await server.createRoom(displayName: "Standup")
    let bob = try await server.connect(token: try await server.auth(name: "bob").jwt)
    _ = try await bob.join(room.id)
    let alice = try await server.connect(token: try await server.auth(name: "alice").jwt)
    _ = try await alice.join(room.id)
    let joined = await bob.events.first { $0.type == .memberJoined && $0.user?.name == "alice" }
    #expect(joined?.roomID == room.id)
}
