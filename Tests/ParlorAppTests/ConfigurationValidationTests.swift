import Foundation
import Testing
@testable import ParlorApp

/// A configuration that cannot work is refused before anything is opened: no database file, no secret file.
@Suite struct ConfigurationValidationTests {
    static let badConfigurations: [(String, @Sendable (inout AppConfiguration) -> Void)] = [
        ("access code", { $0.access = .code; $0.accessCode = nil }),
        ("TLS pairing", { $0.http.tlsCertificatePath = "/nonexistent/cert.pem"; $0.http.tlsPrivateKeyPath = nil }),
        ("room ttl", { $0.rooms.defaultRoomTTL = $0.rooms.maxRoomTTL + 1 }),
        ("TURN pairing", { $0.turnSecret = "turn-secret-turn-secret"; $0.turnURLs = [] }),
        ("metrics port", { $0.http.port = 18_080; $0.metricsAddress = (host: "127.0.0.1", port: 18_080) }),
        ("test mode", { $0.testMode = true; $0.adminToken = nil }),
        ("admin token", { $0.adminToken = "short" }),
        ("JWT secret", { $0.jwtSecret = "short" }),
    ]

    @Test(arguments: badConfigurations.indices)
    func aBadConfigurationLeavesNoFiles(_ index: Int) throws {
        let (name, spoil) = Self.badConfigurations[index]
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parlor-config-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = AppConfiguration.testing()
        configuration.dataDirectory = directory
        configuration.databasePath = directory + "/parlor.db"
        spoil(&configuration)

        #expect(throws: ConfigurationError.self, "\(name)") { _ = try buildApplication(configuration) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == [], "\(name)")
    }
}
