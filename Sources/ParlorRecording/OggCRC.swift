/// Ogg's page checksum (RFC 3533 §6): CRC-32 with polynomial 0x04C11DB7, most significant bit first, initial value 0
/// and no final XOR. Not zlib's CRC-32 (reflected, 0xEDB88320, inverted): a page checked with that one is refused by
/// every Ogg reader.
public enum OggCRC {
    static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index) << 24
        for _ in 0..<8 { value = value & 0x8000_0000 != 0 ? (value << 1) ^ 0x04C1_1DB7 : value << 1 }
        return value
    }

    public static func checksum<Bytes: Sequence>(_ bytes: Bytes, startingWith crc: UInt32 = 0) -> UInt32 where Bytes.Element == UInt8 {
        var crc = crc
        for byte in bytes { crc = (crc << 8) ^ table[Int(((crc >> 24) ^ UInt32(byte)) & 0xFF)] }
        return crc
    }
}
