import Foundation
import ParlorClient

/// One `--until` condition: an event type and `key=value` filters on the event's fields, e.g.
/// `member:left reason=dropped user=bob`. Every filter must hold (and).
struct EventFilter: Sendable, CustomStringConvertible {
    /// Where each filter key is read in the event: the body's fields, `from` at the top level. `me` stands for the
    /// caller's own member id (join only).
    static let fields: [(key: String, path: [String])] = [
        ("reason", ["body", "reason"]), ("user", ["body", "user", "name"]), ("name", ["body", "user", "name"]),
        ("user_id", ["body", "user", "id"]), ("member", ["body", "member_id"]), ("role", ["body", "role"]),
        ("raised", ["body", "raised"]), ("locked", ["body", "locked"]), ("text", ["body", "text"]),
        ("emoji", ["body", "emoji"]), ("by", ["body", "by"]), ("from", ["from"]), ("on", ["body", "on"]),
        ("recording_id", ["body", "recording_id"]), ("public", ["body", "public"]),
        ("enabled", ["body", "media", "audio_settings", "enabled"]), ("muted", ["body", "media", "audio_settings", "muted"]),
    ]
    /// The keys whose value may be `me`.
    static let memberKeys: Set<String> = ["member", "by", "from"]

    let type: String
    let filters: [(key: String, path: [String], value: String)]
    let text: String

    /// Parses `TYPE [key=value …]`; `me` is the caller's member id, nil where there is none (watch).
    init(_ text: String, me: String?) throws(UsageError) {
        let words = text.split(whereSeparator: \.isWhitespace).map(String.init)
        guard let type = words.first, !type.contains("=") else {
            throw UsageError(description: "--until takes an event type first, e.g. 'member:left reason=dropped', not '\(text)'")
        }
        let known = EventType.allCases.filter { $0 != .sessionSuccess }.map(\.rawValue)
        guard known.contains(type) else {
            throw UsageError(description: "--until: unknown event type \(type); one of \(known.joined(separator: ", "))")
        }
        var filters: [(key: String, path: [String], value: String)] = []
        for word in words.dropFirst() {
            guard let equals = word.firstIndex(of: "="), equals != word.startIndex else {
                throw UsageError(description: "--until: '\(word)' is not key=value")
            }
            let key = String(word[..<equals])
            var value = String(word[word.index(after: equals)...])
            guard let path = Self.fields.first(where: { $0.key == key })?.path else {
                throw UsageError(description: "--until: unknown key \(key); one of \(Self.fields.map(\.key).joined(separator: ", "))")
            }
            if value == "me" && Self.memberKeys.contains(key) {
                guard let me else { throw UsageError(description: "--until: \(key)=me needs a member (parlor join)") }
                value = me
            }
            filters.append((key, path, value))
        }
        self.type = type
        self.filters = filters
        self.text = words.joined(separator: " ")
    }

    var description: String { text }

    func matches(_ event: RoomEvent) -> Bool {
        guard event.typeName == type else { return false }
        return filters.allSatisfy { filter in
            var value: JSONValue? = event.raw
            for key in filter.path { value = value?[key] }
            return value.flatMap(Self.text) == filter.value
        }
    }

    /// A scalar as the command line spells it: strings as they are, true/false, whole numbers without ".0".
    private static func text(_ value: JSONValue) -> String? {
        switch value {
        case .string(let string): string
        case .bool(let bool): bool ? "true" : "false"
        case .number: value.integerValue.map(String.init) ?? value.doubleValue.map { String($0) }
        case .null, .array, .object: nil
        }
    }
}

/// What `--until`, `--count`, `--any` and `--timeout` ask join and watch to wait for. Repeated `--until`s must all be
/// seen (any order; one event counts for every condition it matches); `--count N` needs each N times; `--any` stops
/// at the first condition that has its count.
struct WaitConditions: Sendable {
    static let valued: Set<String> = ["--until", "--count", "--timeout", "--since"]
    static let switches: Set<String> = ["--any"]
    /// The options' lines of join's and watch's help.
    static let help = """
          --until 'TYPE [KEY=VALUE …]'  exit 0 once such an event is seen after the start point (see --since). Keys:
                             reason, user (or name), user_id, member, role, raised, locked, text, emoji, by, from, on,
                             recording_id, public, enabled, muted (the event's body fields; values are compared as
                             text: raised=true). E.g. --until 'member:left reason=dropped user=bob'. Repeat --until to
                             wait for all of them (in any order; one event counts for each condition it matches)
          --count N          each --until condition must be seen N times (default 1)
          --any              exit 0 as soon as one --until condition has been seen (--count times)
          --timeout SECONDS  with --until: exit 4 if the conditions are not met by then
        """

    let filters: [EventFilter]
    let count: Int
    let any: Bool
    let timeout: Double?
    private var seen: [Int]

    init(_ options: CommandLineOptions, me: String?) throws(UsageError) {
        var filters: [EventFilter] = []
        for text in options.all("--until") { filters.append(try EventFilter(text, me: me)) }
        self.filters = filters
        if filters.isEmpty {
            for option in ["--count", "--timeout"] where options[option] != nil {
                throw UsageError(description: "\(option) goes with --until")
            }
            if options.has("--any") { throw UsageError(description: "--any goes with --until") }
        }
        if let text = options["--count"] {
            guard let count = Int(text), (1...1_000_000).contains(count) else {
                throw UsageError(description: "--count must be a whole number from 1 to 1000000, not \(text)")
            }
            self.count = count
        } else {
            count = 1
        }
        any = options.has("--any")
        if let text = options["--timeout"] {
            guard let seconds = Double(text), seconds > 0, seconds <= 86_400 else {
                throw UsageError(description: "--timeout must be a positive number of seconds, not \(text)")
            }
            timeout = seconds
        } else {
            timeout = nil
        }
        seen = Array(repeating: 0, count: filters.count)
    }

    var isWaiting: Bool { !filters.isEmpty }

    /// Counts `event` for each condition it matches; true once the wait is over.
    mutating func record(_ event: RoomEvent) -> Bool {
        guard isWaiting else { return false }
        for (index, filter) in filters.enumerated() where filter.matches(event) { seen[index] += 1 }
        return any ? seen.contains { $0 >= count } : seen.allSatisfy { $0 >= count }
    }

    /// For the timeout message: the conditions not met yet, with how often each was seen.
    var unmet: String {
        zip(filters, seen).filter { $0.1 < count }.map { "'\($0.0)' (seen \($0.1) of \(count))" }.joined(separator: ", ")
    }

    /// `--since N` or `--since start` (0): the history after event N is read and matched too; nil (no --since, or
    /// `--since now`): only what happens after the watch or join is established.
    static func since(_ options: CommandLineOptions) throws(UsageError) -> Int64? {
        guard let text = options["--since"], text != "now" else { return nil }
        if text == "start" { return 0 }
        guard let id = Int64(text), id >= 0 else {
            throw UsageError(description: "--since takes an event id, start or now, not \(text)")
        }
        return id
    }
}
