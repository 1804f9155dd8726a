import Foundation

/// Exit codes every subcommand uses (documented in `parlor --help` and the README).
enum ExitCode {
    static let success: Int32 = 0
    /// The server or the database answered with an error, or could not be reached.
    static let failure: Int32 = 1
    /// The command line was wrong.
    static let usage: Int32 = 2
    /// What was asked for does not exist (a room, a token secret).
    static let notFound: Int32 = 3
    /// `--until EVENT --timeout S`: the event did not come in time.
    static let timedOut: Int32 = 4
}

struct UsageError: Error, CustomStringConvertible {
    let description: String
}

/// `--name value`, `--name=value` and switches, plus positional arguments, for the subcommands.
struct CommandLineOptions {
    private(set) var values: [String: String] = [:]
    /// Every value of each valued option, in order (`values` keeps the last): repeated `--until`.
    private(set) var lists: [String: [String]] = [:]
    private(set) var switches: Set<String> = []
    private(set) var positional: [String] = []

    /// Every command that takes `--server` also takes `--ca-file` (an https:// server's CA; ClientCommands.tlsTrust).
    init(_ arguments: [String], valued commandValued: Set<String>, switches allowedSwitches: Set<String>) throws(UsageError) {
        let valued = commandValued.contains("--server") ? commandValued.union(["--ca-file"]) : commandValued
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--") else {
                positional.append(argument)
                continue
            }
            var name = argument
            var value: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            }
            if allowedSwitches.contains(name), value == nil {
                switches.insert(name)
            } else if valued.contains(name) {
                if value == nil {
                    guard index < arguments.count else { throw UsageError(description: "\(name) needs a value") }
                    value = arguments[index]
                    index += 1
                }
                values[name] = value
                lists[name, default: []].append(value ?? "")
            } else {
                throw UsageError(description: "unknown option \(argument)")
            }
        }
    }

    subscript(_ name: String) -> String? { values[name] }
    func has(_ name: String) -> Bool { switches.contains(name) }
    /// Every value given for `name`, in order.
    func all(_ name: String) -> [String] { lists[name] ?? [] }

    /// The server to talk to: --server, then PARLOR_SERVER, then http://localhost:8080.
    var serverURL: String {
        values["--server"] ?? ProcessInfo.processInfo.environment["PARLOR_SERVER"] ?? "http://localhost:8080"
    }
}

/// Plain aligned columns for people; scripts use --json.
enum TableOutput {
    static func print(_ headers: [String], _ rows: [[String]]) {
        let widths = headers.indices.map { column in
            ([headers[column]] + rows.map { $0[column] }).map(\.count).max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }
        Swift.print(line(headers))
        for row in rows { Swift.print(line(row)) }
    }
}

/// Writes one line to stderr.
func warn(_ message: String) {
    FileHandle.standardError.write(Data("parlor: \(message)\n".utf8))
}

/// Pushes printed lines out now (they are read line by line by scripts). fflush(NULL) flushes every stream:
/// Swift 6 will not touch the C global `stdout` from concurrent code.
func flushOutput() {
    fflush(nil)
}
