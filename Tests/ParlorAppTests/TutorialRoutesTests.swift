import Foundation
import Testing
import ParlorApp

/// The HTTP routes the tutorial app calls, with their exact JSON shapes, and their input validation: through the
/// app's middleware and routes without a socket (`routed`), but for the rooms created pipelined on a connection.
@Suite struct TutorialRoutesTests {
    // MARK: The tutorial's contract

    @Test func authAnswersNameAndJWT() throws {
        try withServer { app in
            let response = try routed(app, "POST", "/auth", json: #"{"name":"alice"}"#)
            #expect(response.status == 200)
            #expect(response.header("Content-Type")?.hasPrefix("application/json") == true)
            expectWellFormed(response)
            #expect(response.object["name"] as? String == "alice")
            let jwt = try #require(response.object["jwt"] as? String)
            #expect(jwt.split(separator: ".", omittingEmptySubsequences: false).count == 3)
            #expect((response.object["user_id"] as? String)?.isEmpty == false)
        }
    }

    @Test func sameNameIsAlwaysTheSameUser() throws {
        try withServer { app in
            let first = try routed(app, "POST", "/auth", json: #"{"name":"alice"}"#)
            let second = try routed(app, "POST", "/auth", json: #"{"name":"alice"}"#)
            let padded = try routed(app, "POST", "/auth", json: #"{"name":"  alice "}"#)
            let other = try routed(app, "POST", "/auth", json: #"{"name":"bob"}"#)
            let aliceID = try #require(first.object["user_id"] as? String)
            #expect(second.object["user_id"] as? String == aliceID)
            #expect(padded.object["name"] as? String == "alice", "names are trimmed")
            #expect(padded.object["user_id"] as? String == aliceID)
            #expect(other.object["user_id"] as? String != aliceID)
            #expect(first.object["jwt"] as? String != second.object["jwt"] as? String, "each token has its own jti")
        }
    }

    @Test func createListAndGetARoom() throws {
        try withServer { app in
            let created = try routed(app, "POST", "/rooms", json: #"{"display_name":"Friday chat"}"#)
            #expect(created.status == 201)
            expectWellFormed(created)
            let id = try #require(created.object["id"] as? String)
            #expect(created.object["display_name"] as? String == "Friday chat")
            #expect(created.header("Location") == "/rooms/\(id)")

            let list = try routed(app, "GET", "/rooms")
            #expect(list.status == 200)
            let array = try #require(list.json as? [Any], "GET /rooms must be a bare JSON array: \(list.text)")
            #expect(array.count == 1)
            let room = try #require(array.first as? [String: Any])
            #expect(room["id"] as? String == id)
            #expect(room["display_name"] as? String == "Friday chat")

            let fetched = try routed(app, "GET", "/rooms/\(id)")
            #expect(fetched.status == 200)
            #expect(fetched.object["id"] as? String == id)
            #expect(fetched.object["display_name"] as? String == "Friday chat")
        }
    }

    @Test func unknownRoomIs404() throws {
        try withServer { app in
            let detail = expectProblem(try routed(app, "GET", "/rooms/RM-00000000000000000000000000000000"), 404, "room:error:not-found")
            #expect(detail.contains("RM-00000000000000000000000000000000"))
            expectProblem(try routed(app, "GET", "/rooms/RM-nope/members"), 404, "room:error:not-found")
        }
    }

    /// Creates `count` rooms as fast as the server can: pipelined on one connection, answered (so created) in order.
    static func createRoomsQuickly(_ app: ParlorApplication, count: Int) throws -> [String] {
        let connection = try RawConnection(port: app.port)
        try connection.send((0..<count).map { index in
            let body = #"{"display_name":"Room \#(index)"}"#
            return "POST /rooms HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        }.joined())
        return try (0..<count).map { _ in
            let response = try connection.readResponse()
            guard response.status == 201, let id = response.object["id"] as? String else {
                throw TestFailure("create room failed: \(response.status) \(response.text)")
            }
            return id
        }
    }

    @Test func roomsAreListedNewestFirst() throws {
        try withServer { app in
            // Rooms created within the same millisecond must still list newest first.
            let ids = try Self.createRoomsQuickly(app, count: 20)
            let listed = try routed(app, "GET", "/rooms").array.compactMap { $0["id"] as? String }
            #expect(listed == ids.reversed())
        }
    }

    @Test func paginationFollowsLinkToTheEnd() throws {
        try withServer { app in
            let ids = try Self.createRoomsQuickly(app, count: 7)
            let unpaged = try routed(app, "GET", "/rooms").array.compactMap { $0["id"] as? String }
            var seen: [String] = []
            var pageSizes: [Int] = []
            var path: String? = "/rooms?page_size=3"
            while let next = path {
                let page = try routed(app, "GET", next)
                #expect(page.status == 200, "\(next): \(page.text)")
                let pageIDs = page.array.compactMap { $0["id"] as? String }
                seen += pageIDs
                pageSizes.append(pageIDs.count)
                path = nextLink(page)
                if let path { #expect(path.hasPrefix("/rooms?") && path.contains("page_size=3") && path.contains("cursor=")) }
                guard pageSizes.count <= 5 else { throw TestFailure("pagination does not end: \(seen)") }
            }
            #expect(pageSizes == [3, 3, 1])
            #expect(Set(seen).count == seen.count, "no room twice: \(seen)")
            #expect(Set(seen) == Set(ids), "no room left out")
            #expect(seen == unpaged, "pages follow the same order as one big page")
        }
    }

    @Test func exactlyFullLastPageHasNoNextLink() throws {
        try withServer { app in
            for index in 0..<2 { _ = try createRoom(app, "Room \(index)") }
            let page = try routed(app, "GET", "/rooms?page_size=2")
            #expect(page.array.count == 2)
            #expect(page.header("Link") == nil)
        }
    }

    @Test(arguments: ["0", "-1", "abc", "1001", "1.5", ""])
    func invalidPageSizeIs400(_ value: String) throws {
        try withServer { app in
            let detail = expectProblem(try routed(app, "GET", "/rooms?page_size=\(value)"), 400, "request:error:invalid-field")
            #expect(detail.contains("page_size"))
        }
    }

    @Test func invalidCursorIs400() throws {
        try withServer { app in
            let detail = expectProblem(try routed(app, "GET", "/rooms?cursor=%21%21not-a-cursor"), 400, "request:error:invalid-field")
            #expect(detail.contains("cursor"))
        }
    }

    // MARK: Validation

    /// Bodies of POST /auth that must be refused, with the error code expected.
    static let badNames: [(String, String)] = [
        (#"{"name":""}"#, "request:error:invalid-field"),
        (#"{"name":"   \t "}"#, "request:error:invalid-field"),
        ("{\"name\":\"\(String(repeating: "a", count: 65))\"}", "request:error:invalid-field"),
        (#"{"name":"al\u0007ice"}"#, "request:error:invalid-field"),
        (#"{"name":"al\nice"}"#, "request:error:invalid-field"),
        (#"{"name":42}"#, "request:error:invalid-field"),
        (#"{"name":["alice"]}"#, "request:error:invalid-field"),
        (#"{"name":null}"#, "request:error:invalid-field"),
        (#"{"nom":"alice"}"#, "request:error:missing-field"),
        ("{}", "request:error:missing-field"),
    ]

    @Test(arguments: badNames)
    func invalidNameIs400(_ body: String, _ code: String) throws {
        try withServer { app in
            let detail = expectProblem(try routed(app, "POST", "/auth", json: body), 400, code)
            #expect(detail.contains("name"), "detail must name the field: \(detail)")
        }
    }

    @Test func nameOf64CharactersIsAccepted() throws {
        try withServer { app in
            let name = String(repeating: "é", count: 64)
            let response = try routed(app, "POST", "/auth", json: #"{"name":"\#(name)"}"#)
            #expect(response.status == 200)
            #expect(response.object["name"] as? String == name)
        }
    }

    static let badDisplayNames: [(String, String)] = [
        (#"{"display_name":""}"#, "request:error:invalid-field"),
        (#"{"display_name":"  "}"#, "request:error:invalid-field"),
        ("{\"display_name\":\"\(String(repeating: "x", count: 101))\"}", "request:error:invalid-field"),
        (#"{"display_name":"a\u0000b"}"#, "request:error:invalid-field"),
        (#"{"display_name":true}"#, "request:error:invalid-field"),
        (#"{"display_name":{"text":"x"}}"#, "request:error:invalid-field"),
        (#"{"name":"friday"}"#, "request:error:missing-field"),
    ]

    @Test(arguments: badDisplayNames)
    func invalidDisplayNameIs400(_ body: String, _ code: String) throws {
        try withServer { app in
            let detail = expectProblem(try routed(app, "POST", "/rooms", json: body), 400, code)
            #expect(detail.contains("display_name"), "detail must name the field: \(detail)")
        }
    }

    @Test(arguments: [#"{"name":"#, "not json", "[]", #""alice""#, "", #"{"name":"alice"} trailing"#])
    func invalidJSONIs400(_ body: String) throws {
        try withServer { app in
            expectProblem(try routed(app, "POST", "/auth", json: body), 400, "request:error:invalid-json")
            expectProblem(try routed(app, "POST", "/rooms", json: body), 400, "request:error:invalid-json")
        }
    }

    @Test func duplicateRoomNameIs409() throws {
        try withServer { app in
            let first = try routed(app, "POST", "/rooms", json: #"{"display_name":"One","name":"friday-chat"}"#)
            #expect(first.status == 201)
            #expect(first.object["name"] as? String == "friday-chat")
            expectProblem(try routed(app, "POST", "/rooms", json: #"{"display_name":"Two","name":"friday-chat"}"#), 409, "room:error:name-taken")
            let detail = expectProblem(try routed(app, "POST", "/rooms", json: #"{"display_name":"Three","name":"has space"}"#),
                                       400, "request:error:invalid-field")
            #expect(detail.contains("name"))
            #expect(try routed(app, "GET", "/rooms").array.count == 1)
        }
    }

    static let badProperties: [(String, String)] = [
        (#""properties":5"#, "properties"),
        (#""properties":{"ttl":-1}"#, "properties.ttl"),
        (#""properties":{"ttl":31536001}"#, "properties.ttl"),
        (#""properties":{"ttl":1.5}"#, "properties.ttl"),
        (#""properties":{"ttl":"60"}"#, "properties.ttl"),
        (#""properties":{"max_members":0}"#, "properties.max_members"),
        (#""properties":{"max_members":100001}"#, "properties.max_members"),
        (#""properties":{"max_members":"ten"}"#, "properties.max_members"),
    ]

    @Test(arguments: badProperties)
    func invalidPropertiesAre400(_ fragment: String, _ field: String) throws {
        try withServer { app in
            let detail = expectProblem(try routed(app, "POST", "/rooms", json: #"{"display_name":"P",\#(fragment)}"#),
                                       400, "request:error:invalid-field")
            #expect(detail.contains(field), "detail must name \(field): \(detail)")
        }
    }

    @Test func validPropertiesAreStored() throws {
        try withServer { app in
            let id = try createRoom(app, "Props", properties: #"{"ttl":60,"max_members":10}"#)
            let room = try routed(app, "GET", "/rooms/\(id)").object
            let properties = try #require(room["properties"] as? [String: Any])
            #expect(properties["ttl"] as? Int == 60)
            #expect(properties["max_members"] as? Int == 10)
            let defaults = try routed(app, "GET", "/rooms/\(try createRoom(app, "Defaults"))").object["properties"] as? [String: Any]
            #expect(defaults?["ttl"] as? Int == 300)
        }
    }

    // MARK: Tokens on /rooms

    @Test func invalidTokenOnRoomsIs401() throws {
        try withServer { app in
            let id = try createRoom(app)
            for (method, path, body) in [("GET", "/rooms", nil), ("POST", "/rooms", #"{"display_name":"x"}"#), ("GET", "/rooms/\(id)", nil)] {
                let response = try routed(app, method, path, json: body, token: "not.a.jwt")
                expectProblem(response, 401, "auth:error:invalid-token")
                #expect(response.header("WWW-Authenticate") == "Bearer")
            }
            #expect(try routed(app, "GET", "/rooms").array.count == 1, "the refused POST created nothing")
        }
    }

    @Test func createdByIsTheTokensUser() throws {
        try withServer { app in
            let auth = try routed(app, "POST", "/auth", json: #"{"name":"alice"}"#)
            let jwt = try #require(auth.object["jwt"] as? String)
            let userID = try #require(auth.object["user_id"] as? String)
            let created = try routed(app, "POST", "/rooms", json: #"{"display_name":"Mine"}"#, token: jwt)
            #expect(created.status == 201)
            #expect(created.object["created_by"] as? String == userID)
            let id = try #require(created.object["id"] as? String)
            #expect(try routed(app, "GET", "/rooms/\(id)", token: jwt).object["created_by"] as? String == userID)
            let listed = try routed(app, "GET", "/rooms", token: jwt)
            #expect(listed.status == 200)
            #expect(listed.array.first?["created_by"] as? String == userID)
            let anonymous = try routed(app, "POST", "/rooms", json: #"{"display_name":"Nobody's"}"#)
            #expect(anonymous.object["created_by"] is NSNull)
        }
    }
}
