/// Lowercase hexadecimal, two digits a byte: digests, secrets and claims as text.
public enum Hex {
    /// Written straight into the string's storage. A generic loop here was not specialised for callers in other
    /// modules and cost ~500 instructions a byte (16,000 per POST /auth claim, callgrind).
    public static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBufferPointer { input in
            String(unsafeUninitializedCapacity: input.count * 2) { output in
                var index = 0
                for byte in input {
                    output[index] = digit(byte >> 4)
                    output[index + 1] = digit(byte & 0x0F)
                    index += 2
                }
                return index
            }
        }
    }

    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        encode(Array(bytes))
    }

    private static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}
