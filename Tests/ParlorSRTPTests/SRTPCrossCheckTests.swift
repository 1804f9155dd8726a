import Foundation
import Testing
@testable import ParlorSRTP

/// ParlorSRTP against libsrtp, both ways, through Tests/interop/srtp_crosscheck.py and PyPI's pylibsrtp (which
/// bundles its own libsrtp): libsrtp protects and we unprotect, we protect and libsrtp unprotects, 10,000 RTP
/// packets and 625 SRTCP packets per profile, with rollovers, reordering, replays and tampered copies.
///
/// The interpreter is `PARLOR_PYTHON` (the Makefile passes its venv's), else `.venv/bin/python` at the package root
/// (`make venv`). Without pylibsrtp the test fails and says how to install it: it is not skipped.
@Suite struct SRTPCrossCheckTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A relative `PARLOR_PYTHON` (the Makefile's `.venv/bin/python`) is taken from the package root.
    static var python: String {
        let path = ProcessInfo.processInfo.environment["PARLOR_PYTHON"].flatMap { $0.isEmpty ? nil : $0 } ?? ".venv/bin/python"
        return path.hasPrefix("/") ? path : packageRoot.appendingPathComponent(path).path
    }

    /// Runs the interpreter; returns its exit status and its output (stdout and stderr).
    static func runPython(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    @Test func libsrtpAndParlorSRTPUnprotectEachOthersPackets() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.python),
              let check = try? Self.runPython(["-c", "import pylibsrtp"]), check.status == 0 else {
            Issue.record("""
                The SRTP cross-check needs Python with pylibsrtp at \(Self.python): run `make venv` (it installs \
                Tests/interop/requirements.txt into .venv) or set PARLOR_PYTHON to an interpreter that has pylibsrtp.
                """)
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parlor-srtp-crosscheck-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = Self.packageRoot.appendingPathComponent("Tests/interop/srtp_crosscheck.py").path

        // libsrtp protects, we unprotect.
        let generated = try Self.runPython([script, "generate", directory.path])
        try #require(generated.status == 0, "srtp_crosscheck.py generate failed:\n\(generated.output)")
        for profile in SRTPProtectionProfile.allCases {
            let data = try Data(contentsOf: directory.appendingPathComponent("python-\(SRTPCrossCheckFile.name(of: profile)).bin"))
            let file = try #require(SRTPCrossCheckFile(parsing: [UInt8](data)))
            #expect(file.profile == profile)
            let receiver = try SRTPReceiver(profile: profile, keyingMaterial: file.keyingMaterial)
            var accepted = 0, refused = 0, failures: [String] = []
            for (number, record) in file.records.enumerated() {
                var packet = record.protected
                let result = Result { () throws(SRTPError) in
                    record.kind == .rtcp ? try receiver.unprotectRTCP(&packet) : try receiver.unprotectRTP(&packet)
                }
                switch (record.expectation, result) {
                case (.accepted, .success) where packet == record.plain: accepted += 1
                case (.accepted, .success): failures.append("record \(number): plain packet differs from libsrtp's")
                case (.accepted, .failure(let error)): failures.append("record \(number): refused a libsrtp packet: \(error)")
                case (_, .failure): refused += 1
                case (let expectation, .success): failures.append("record \(number): accepted a packet expected \(expectation)")
                }
            }
            #expect(failures.isEmpty, "\(profile): \(failures.count) failures, first: \(failures.prefix(5))")
            #expect(accepted == file.records.filter { $0.expectation == .accepted }.count)
            #expect(accepted >= 10_600 && refused >= 100, "\(profile): \(accepted) accepted, \(refused) refused")
        }

        // We protect, libsrtp unprotects.
        for profile in SRTPProtectionProfile.allCases {
            let file = try SRTPCrossCheckFile.protectedBySwift(profile: profile, seed: UInt64.random(in: 0...UInt64.max))
            try Data(file.serialized()).write(to: directory.appendingPathComponent("swift-\(SRTPCrossCheckFile.name(of: profile)).bin"))
        }
        let verified = try Self.runPython([script, "verify", directory.path])
        #expect(verified.status == 0, "libsrtp refused or changed packets ParlorSRTP protected:\n\(verified.output)")
        print(generated.output + verified.output)
    }
}
