import Foundation

/// A strict reader of the Prometheus text format 0.0.4 for tests: every line is `# HELP name text`,
/// `# TYPE name type` (once per family, before its samples) or `name{label="value",…} number`; anything else throws.
struct PrometheusText {
    struct Sample {
        let name: String
        let labels: [String: String]
        let value: Double
    }

    private(set) var samples: [Sample] = []
    private(set) var types: [String: String] = [:]

    init(_ text: String) throws {
        guard text.hasSuffix("\n") else { throw TestFailure("exposition does not end with a newline") }
        for line in text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("# ") {
                let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
                guard parts.count >= 3, ["HELP", "TYPE"].contains(parts[1]), Self.isName(parts[2]) else {
                    throw TestFailure("bad comment line: \(line)")
                }
                if parts[1] == "TYPE" {
                    guard parts.count == 4, ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3]),
                          types[parts[2]] == nil else { throw TestFailure("bad or repeated TYPE: \(line)") }
                    guard !samples.contains(where: { Self.family(of: $0.name, types: [parts[2]: parts[3]]) == parts[2] }) else {
                        throw TestFailure("TYPE after samples: \(line)")
                    }
                    types[parts[2]] = parts[3]
                }
                continue
            }
            let sample = try Self.parseSample(line)
            guard types[Self.family(of: sample.name, types: types) ?? ""] != nil else { throw TestFailure("sample without TYPE: \(line)") }
            samples.append(sample)
        }
    }

    /// The family a sample belongs to: its own name, or a histogram's name without `_bucket`/`_sum`/`_count`.
    static func family(of name: String, types: [String: String]) -> String? {
        if types[name] != nil { return name }
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            if types[base] == "histogram" || types[base] == "summary" { return base }
        }
        return nil
    }

    static func isName(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first == "_" || first == ":" || (first.isASCII && CharacterSet.letters.contains(first)) else { return false }
        return text.unicodeScalars.allSatisfy { $0.isASCII && ($0 == "_" || $0 == ":" || CharacterSet.alphanumerics.contains($0)) }
    }

    private static func parseSample(_ line: String) throws -> Sample {
        var rest = Substring(line)
        let nameEnd = rest.firstIndex { $0 == "{" || $0 == " " } ?? rest.endIndex
        let name = String(rest[..<nameEnd])
        guard isName(name) else { throw TestFailure("bad metric name: \(line)") }
        rest = rest[nameEnd...]
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                guard let equals = rest.firstIndex(of: "=") else { throw TestFailure("bad label: \(line)") }
                let key = String(rest[..<equals])
                guard isName(key), labels[key] == nil else { throw TestFailure("bad or repeated label name: \(line)") }
                rest = rest[rest.index(after: equals)...]
                guard rest.first == "\"" else { throw TestFailure("unquoted label value: \(line)") }
                rest = rest.dropFirst()
                var value = ""
                while true {
                    guard let character = rest.first else { throw TestFailure("unterminated label value: \(line)") }
                    rest = rest.dropFirst()
                    if character == "\"" { break }
                    if character == "\\" {
                        guard let escaped = rest.first, ["\\", "\"", "n"].contains(escaped) else { throw TestFailure("bad escape: \(line)") }
                        rest = rest.dropFirst()
                        value.append(escaped == "n" ? "\n" : escaped)
                    } else {
                        value.append(character)
                    }
                }
                labels[key] = value
                if rest.first == "," { rest = rest.dropFirst() } else if rest.first != "}" { throw TestFailure("bad label list: \(line)") }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { throw TestFailure("no value: \(line)") }
        let valueText = String(rest.dropFirst())
        let value: Double
        switch valueText {
        case "+Inf": value = .infinity
        case "-Inf": value = -.infinity
        case "NaN": value = .nan
        default:
            guard let parsed = Double(valueText), !valueText.contains(" ") else { throw TestFailure("bad value: \(line)") }
            value = parsed
        }
        return Sample(name: name, labels: labels, value: value)
    }

    /// The one sample of `name` with exactly these labels; fails the test when missing or repeated.
    func value(_ name: String, _ labels: [String: String] = [:]) throws -> Double {
        let found = samples.filter { $0.name == name && $0.labels == labels }
        guard found.count == 1 else { throw TestFailure("\(found.count) samples of \(name)\(labels)") }
        return found[0].value
    }

    /// Every sample of `name`, for label checks.
    func all(_ name: String) -> [Sample] { samples.filter { $0.name == name } }
}
