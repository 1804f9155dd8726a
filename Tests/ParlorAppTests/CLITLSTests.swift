import Foundation
import ParlorApp
import ParlorProtocol
import Testing

/// The client commands against a server with a self-signed certificate: `--ca-file` (or PARLOR_CA_FILE) trusts it;
/// without it the command fails with client:error:tls and never talks plain HTTP.
@Suite struct CLITLSTests {
    @Test func clientCommandsTrustTheServersCertificateThroughCAFile() throws {
        try withTemporaryDirectory { directory in
            try withServer({ $0.tlsSelfSigned = true; $0.dataDirectory = directory }) { app in
                let url = "https://127.0.0.1:\(app.port)"
                let certificate = directory + "/tls-cert.pem"
                let created = try CLITests.run(["rooms", "create", "Over TLS", "--server", url, "--ca-file", certificate])
                #expect(created.status == 0)
                let roomID = created.output.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(roomID.hasPrefix("RM-"), "\(created.output)")
                let listed = try CLITests.run(["rooms", "list", "--server", url, "--ca-file=\(certificate)", "--json"])
                #expect(listed.status == 0)
                #expect(listed.output.contains(roomID))
                let events = try CLITests.run(["events", roomID, "--server", url, "--ca-file", certificate, "--json"])
                #expect(events.status == 0)
                #expect(events.output.hasPrefix("["))

                // Without the certificate: the TLS error, exit 1.
                let refused = try CLITests.runCapturingErrors(["rooms", "list", "--server", url])
                #expect(refused.status == 1)
                #expect(refused.errors.contains(ClientErrorCode.tls.rawValue), "\(refused.errors)")
                #expect(refused.errors.contains("untrusted certificate"), "\(refused.errors)")
                // A CA file that is not there is a usage error before any connection.
                let missing = try CLITests.runCapturingErrors(["rooms", "list", "--server", url, "--ca-file", directory + "/none.pem"])
                #expect(missing.status == 2)
                #expect(missing.errors.contains("cannot read"), "\(missing.errors)")

                // PARLOR_CA_FILE and PARLOR_SERVER instead of the options.
                let fromEnvironment = try Self.run(["rooms", "list", "--json"], environment: ["PARLOR_SERVER": url, "PARLOR_CA_FILE": certificate])
                #expect(fromEnvironment.status == 0)
                #expect(fromEnvironment.output.contains(roomID))
            }
        }
    }

    @Test func helpListsCAFile() throws {
        for command in ["rooms", "events"] {
            let help = try CLITests.run([command, "--help"])
            #expect(help.status == 0)
            #expect(help.output.contains("--ca-file PATH"), "\(command)")
            #expect(help.output.contains("PARLOR_CA_FILE"), "\(command)")
        }
    }

    /// `parlor arguments…` with `environment` added (CLITests' runner clears every PARLOR_* variable).
    static func run(_ arguments: [String], environment: [String: String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try ExecutableTests.binaryPath())
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PARLOR_") }.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        guard exited.wait(timeout: .now() + 15) == .success else {
            process.terminate()
            throw TestFailure("parlor \(arguments) did not finish within 15 s")
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, text)
    }
}
