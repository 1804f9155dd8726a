import Foundation
import Testing
import ParlorApp

/// Each abuse limit, set low, refuses what passes it with a clear answer and leaves the server healthy.
@Suite struct AbuseLimitTests {
    @Test func authRequestsPerAddressAreRateLimited() throws {
        try withServer({ $0.authRatePerIP = 1 }) { app in
            // A burst of three is allowed, then 429 with Retry-After.
            for index in 0..<3 { #expect(try http(app, "POST", "/auth", json: #"{"name":"u\#(index)"}"#).status == 200) }
            let refused = try http(app, "POST", "/auth", json: #"{"name":"u4"}"#)
            #expect(refused.status == 429)
            #expect(refused.errorCode == "auth:error:rate-limited")
            #expect(Int(refused.header("Retry-After") ?? "") ?? 0 >= 1)
            #expect(try http(app, "GET", "/healthz").status == 200)
        }
    }

    @Test func webSocketMessageFloodIsClosedWith1008() throws {
        try withServer({ $0.messagesPerSecond = 5 }) { app in
            let client = try TestWebSocket(app, name: "flooder")
            for index in 0..<40 { try client.sendText(#"{"type":"session:ping","tid":"\#(index)"}"#) }
            #expect(try client.closeCode() == 1008)
            let polite = try TestWebSocket(app, name: "polite")
            try polite.sync()
        }
    }

    @Test func roomCreationIsLimitedPerUserAndInTotal() throws {
        try withServer({ $0.rooms.maxRoomsPerUser = 2; $0.rooms.maxOpenRooms = 3 }) { app in
            let owner = ["Authorization": "Bearer \(try token(app, "owner"))"]
            for index in 0..<2 {
                #expect(try http(app, "POST", "/rooms", json: #"{"display_name":"r\#(index)"}"#, headers: owner).status == 201)
            }
            let third = try http(app, "POST", "/rooms", json: #"{"display_name":"r3"}"#, headers: owner)
            #expect(third.status == 429)
            #expect(third.errorCode == "room:error:too-many-rooms")
            #expect(try http(app, "POST", "/rooms", json: #"{"display_name":"anonymous"}"#).status == 201)
            let full = try http(app, "POST", "/rooms", json: #"{"display_name":"one too many"}"#)
            #expect(full.status == 503)
            #expect(full.errorCode == "room:error:server-full")
        }
    }

    @Test func membersPerRoomAreCapped() throws {
        try withServer({ $0.rooms.maxMembersPerRoom = 2 }) { app in
            let room = try createRoom(app, properties: #"{"max_members":50}"#)
            let clients = try ["a", "b", "c"].map { try TestWebSocket(app, name: $0) }
            _ = try clients[0].join(room)
            _ = try clients[1].join(room)
            #expect(errorCode(try clients[2].request("conversation:join", ["cid": room])) == "room:error:full")
        }
    }
}
