import Foundation
import Testing
@testable import ParlorApp

/// The web client is one module per concept (Sources/ParlorApp/Web): every file there must be listed in
/// `WebClientFiles` (Routes+Static.swift), or the page fails to load a module that the build embedded.
@Suite struct WebClientFilesTests {
    static let webDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/ParlorApp/Web")

    /// Web's files by their path there: the page's own, and sdk/ (symlinks to clients/js, the JavaScript client).
    static func sourceFiles() throws -> [String] {
        let top = try FileManager.default.contentsOfDirectory(atPath: webDirectory.path).filter { !$0.hasPrefix(".") && $0 != "sdk" }
        let sdk = try FileManager.default.contentsOfDirectory(atPath: webDirectory.appendingPathComponent("sdk").path)
            .filter { !$0.hasPrefix(".") }.map { "sdk/\($0)" }
        return (top + sdk).sorted()
    }

    @Test func everyFileInWebIsServedAsItIsOnDisk() throws {
        let names = try Self.sourceFiles()
        #expect(names.contains("sfu.js") && names.contains("rtc.js") && names.contains("app.js") && names.contains("sdk/parlor.js"))
        try withServer { app in
            for name in names {
                let response = try routed(app, "GET", "/\(name)")
                let onDisk = try [UInt8](Data(contentsOf: Self.webDirectory.appendingPathComponent(name)))
                #expect(response.status == 200, "/\(name) is not served: add it to WebClientFiles")
                #expect(response.body == onDisk, "/\(name) differs from the file")
                let type = name.hasSuffix(".js") ? "text/javascript" : name.hasSuffix(".css") ? "text/css"
                    : name.hasSuffix(".d.ts") ? "text/plain" : "text/html"
                #expect(response.header("Content-Type")?.hasPrefix(type) == true, "/\(name): \(response.header("Content-Type") ?? "none")")
            }
        }
    }

    /// One copy of the JavaScript client in git: Web/sdk links to clients/js, and the server serves that file.
    @Test func theJavaScriptClientIsServedFromClientsJS() throws {
        let clients = Self.webDirectory.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("clients/js")
        try withServer { app in
            for name in ["parlor.js", "parlor.d.ts"] {
                let response = try routed(app, "GET", "/sdk/\(name)")
                let onDisk = try [UInt8](Data(contentsOf: clients.appendingPathComponent(name)))
                #expect(response.status == 200 && response.body == onDisk, "/sdk/\(name) is not clients/js/\(name)")
            }
        }
        let link = try FileManager.default.destinationOfSymbolicLink(atPath: Self.webDirectory.appendingPathComponent("sdk/parlor.js").path)
        #expect(link == "../../../../clients/js/parlor.js")
    }

    @Test func everyModuleImportNamesAServedFile() throws {
        let served = Set(WebClientFiles.files.keys)
        let pattern = try NSRegularExpression(pattern: #"from '\./((?:sdk/)?[A-Za-z0-9_-]+\.js)'"#)
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

    /// The modules import one way only: a circle (as events → room → lobby → session → events once was) makes
    /// evaluation order decide which binding is still undefined, and ties every view to every other.
    @Test func moduleImportsHaveNoCircle() throws {
        let pattern = try NSRegularExpression(pattern: #"^import [^;]*?'\./((?:sdk/)?[A-Za-z0-9_-]+\.js)'"#, options: [.anchorsMatchLines])
        var imports: [String: [String]] = [:]
        for name in try Self.sourceFiles() where name.hasSuffix(".js") {
            let text = try String(contentsOf: Self.webDirectory.appendingPathComponent(name), encoding: .utf8)
            imports[name] = pattern.matches(in: text, range: NSRange(text.startIndex..., in: text))
                .map { String(text[Range($0.range(at: 1), in: text)!]) }
        }
        #expect(imports["app.js"]?.contains("lobby.js") == true, "the import pattern found nothing: \(imports)")
        #expect(Self.importCircle(in: imports) == nil, "import circle: \(Self.importCircle(in: imports) ?? [])")
        // The check itself sees a circle when there is one.
        #expect(Self.importCircle(in: ["a.js": ["b.js"], "b.js": ["c.js"], "c.js": ["a.js"]]) != nil)
    }

    /// One circle of the graph as a path (its first module repeated at the end), or nil: a depth-first walk.
    static func importCircle(in graph: [String: [String]]) -> [String]? {
        var finished: Set<String> = []
        var path: [String] = []
        func visit(_ module: String) -> [String]? {
            if let start = path.firstIndex(of: module) { return Array(path[start...]) + [module] }
            if finished.contains(module) { return nil }
            path.append(module)
            defer { path.removeLast(); finished.insert(module) }
            for next in graph[module] ?? [] {
                if let circle = visit(next) { return circle }
            }
            return nil
        }
        for module in graph.keys.sorted() {
            if let circle = visit(module) { return circle }
        }
        return nil
    }
}
