// The fuzz targets (Tests/Fuzz/run.sh) compile ByteWords.swift into their own module instead.
#if canImport(ParlorCodec)
import ParlorCodec
#endif

/// Encodes JSONValue to compact UTF-8 bytes.
extension JSONValue {
    public func encoded() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(128)
        write(to: &output)
        return output
    }

    public func encodedString() -> String { String(decoding: encoded(), as: UTF8.self) }

    public func write(to output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: Self.nullBytes)
        case .bool(let value): output.append(contentsOf: value ? Self.trueBytes : Self.falseBytes)
        case .number(let value): Self.writeNumber(value, to: &output)
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                element.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for (index, pair) in object.pairs.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.writeString(pair.key, to: &output)
                output.append(UInt8(ascii: ":"))
                pair.value.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    static func writeNumber(_ value: Double, to output: inout [UInt8]) {
        if value.rounded() == value, abs(value) < 9.0e15 {
            writeInteger(Int64(value), to: &output)
        } else if value.isFinite {
            output.append(contentsOf: Array(String(value).utf8))
        } else {
            output.append(contentsOf: nullBytes)
        }
    }

    /// Decimal digits without a `String` in between: event ids and timestamps are written on every event.
    static func writeInteger(_ value: Int64, to output: inout [UInt8]) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var index = digits.count
            repeat {
                index -= 1
                digits[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            output.append(contentsOf: UnsafeBufferPointer(rebasing: digits[index...]))
        }
    }

    static let nullBytes: [UInt8] = Array("null".utf8)
    static let trueBytes: [UInt8] = Array("true".utf8)
    static let falseBytes: [UInt8] = Array("false".utf8)

    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Whether `bytes` hold a control character, `"`, `\` or DEL (which `writeString` escapes too): eight bytes at a
    /// time, the byte-by-byte check was most of writing an id.
    static func needsEscaping(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let clean = ByteWords.cleanPrefixLength(bytes) { word in
            ByteWords.hasByte(below: 0x20, word) || ByteWords.hasByte(0x22, in: word) || ByteWords.hasByte(0x5C, in: word)
                || ByteWords.hasByte(0x7F, in: word)
        }
        return bytes[clean...].contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F }
    }

    static func writeString(_ value: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        // Most strings (ids, names, timestamps) need no escaping: check and copy them whole from contiguous UTF-8
        // (the generic `utf8` view costs several times more per string, and an event writes a dozen).
        var value = value
        let copied = value.withUTF8 { bytes in
            guard !needsEscaping(bytes) else { return false }
            output.append(contentsOf: bytes)
            return true
        }
        if copied {
            output.append(UInt8(ascii: "\""))
            return
        }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): output.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20, 0x7F:
                output.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
