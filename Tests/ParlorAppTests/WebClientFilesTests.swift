import Foundation
import Testing
@testable import ParlorApp

/// The web client is one module per concept (Sources/ParlorApp/Web): every file there must be listed in
/// `WebClientFiles` (Routes+Static.swift), or the page fails to load a module that the build embedded.
@Suite struct WebClientFilesTests {
    static let webDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/ParlorApp/Web")

    static func sourceFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: webDirectory.path).filter { !$0.hasPrefix(".") }.sorted()
    }

    @Test func everyFileInWebIsServedAsItIsOnDisk() throws {
        let names = try Self.sourceFiles()
        #expect(names.contains("sfu.js") && names.contains("rtc.js") && names.contains("app.js"))
        try withServer { app in
            for name in names {
                let response = try http(app, "GET", "/\(name)")
                let onDisk = try [UInt8](Data(contentsOf: Self.webDirectory.appendingPathComponent(name)))
                #expect(response.status == 200, "/\(name) is not served: add it to WebClientFiles")
                #expect(response.body == onDisk, "/\(name) differs from the file")
                let type = name.hasSuffix(".js") ? "text/javascript" : name.hasSuffix(".css") ? "text/css" : "text/html"
                #expect(response.header("Content-Type")?.hasPrefix(type) == true, "/\(name): \(response.header("Content-Type") ?? "none")")
            }
        }
    }

    @Test func everyModuleImportNamesAServedFile() throws {
        let served = Set(WebClientFiles.files.keys)
        let pattern = try NSRegularExpression(pattern: #"from '\./([A-Za-z0-9_-]+\.js)'"#)
        var imports = 0
        for name in try Self.sourceFiles() where name.hasSuffix(".js") {
            let text = try String(contentsOf: Self.webDirectory.appendingPathComponent(name), encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let target = String(text[Range(match.range(at: 1), in: text)!])
                imports += 1
                #expect(served.contains("/\(target)"), "\(name) imports ./\(target), which is not served")
            }
        }
        #expect(imports > 20)
    }
}
