import Foundation
import Testing
@testable import ParlorApp

/// The OpenAPI document describes every route the router knows, with its error responses, and docs/ holds it.
@Suite struct OpenAPITests {
    @Test func everyRouteIsDescribedWithItsErrors() throws {
        try withServer({ $0.adminToken = "admin-token-for-tests-0123456789"; $0.testMode = true }) { app in
            let served = try routed(app, "GET", "/openapi.json")
            #expect(served.status == 200)
            #expect(served.object["openapi"] as? String == "3.1.0")
            let paths = try #require(served.object["paths"] as? [String: [String: Any]])
            let routes = Routes(configuration: app.configuration, storage: app.storage, executor: app.executor, rooms: app.rooms,
                                delivery: app.delivery, users: app.users, tokens: app.tokens, logger: app.logger, authLimiter: nil).router().routes
            #expect(routes.count >= 14)
            for route in routes {
                let operation = paths[route.pattern]?[route.method.lowercased()] as? [String: Any]
                #expect(operation != nil, "\(route.method) \(route.pattern) is not in the OpenAPI document")
                let responses = operation?["responses"] as? [String: Any] ?? [:]
                #expect(responses.keys.contains { $0.hasPrefix("4") || $0.hasPrefix("5") },
                        "\(route.method) \(route.pattern) lists no error response")
            }
        }
    }

    @Test func docsCopyIsCurrent() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let file = root.appendingPathComponent("docs/openapi.json")
        let stored = try String(contentsOf: file, encoding: .utf8)
        #expect(stored == openAPIDocumentText(), "docs/openapi.json is stale: run `swift run parlor openapi > docs/openapi.json`")
    }
}
