import Testing
@testable import ParlorCodec

@Suite struct WebSocketDecoderErrorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var bytes: [UInt8]
        var role: WebSocketRole = .server
        var closeCode: UInt16
        var testDescription: String { name }
    }

    static let maskBytes: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]

    static let cases: [Case] = [
        // 1002: frame structure.
        Case(name: "RSV1 set", bytes: [0xC1, 0x80] + maskBytes, closeCode: 1002),
        Case(name: "RSV2 set", bytes: [0xA1, 0x80] + maskBytes, closeCode: 1002),
        Case(name: "RSV3 set", bytes: [0x91, 0x80] + maskBytes, closeCode: 1002),
        Case(name: "reserved data opcode 3", bytes: [0x83, 0x80] + maskBytes, closeCode: 1002),
        Case(name: "reserved data opcode 7", bytes: [0x87, 0x80] + maskBytes, closeCode: 1002),
        Case(name: "reserved control opcode 11", bytes: [0x8B, 0x80] + maskBytes, closeCode: 1002),
        Case(name: "reserved control opcode 15", bytes: [0x8F, 0x80] + maskBytes, closeCode: 1002),
        Case(name: "unmasked frame to server", bytes: WebSocketFrameEncoder.text("hi"), closeCode: 1002),
        Case(name: "masked frame to client", bytes: clientFrame(.text, [UInt8]("hi")), role: .client, closeCode: 1002),
        Case(name: "fragmented ping", bytes: clientFrame(.ping, [1], fin: false), closeCode: 1002),
        Case(name: "ping over 125 bytes", bytes: clientFrame(.ping, [UInt8](repeating: 0, count: 126)), closeCode: 1002),
        Case(name: "close over 125 bytes", bytes: [0x88, 0xFE, 0x00, 0x7E], closeCode: 1002),
        Case(name: "continuation without a message", bytes: clientFrame(.continuation, [UInt8]("x")), closeCode: 1002),
        Case(name: "text during fragmented message",
             bytes: clientFrame(.text, [UInt8]("a"), fin: false) + clientFrame(.text, [UInt8]("b")), closeCode: 1002),
        Case(name: "binary during fragmented message",
             bytes: clientFrame(.binary, [1], fin: false) + clientFrame(.binary, [2]), closeCode: 1002),
        Case(name: "64-bit length with top bit set",
             bytes: [0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 1] + maskBytes, closeCode: 1002),
        Case(name: "close payload of 1 byte", bytes: clientFrame(.close, [0x03]), closeCode: 1002),
        // 1007: invalid UTF-8.
        Case(name: "invalid byte 0xFF", bytes: clientFrame(.text, [0x61, 0xFF]), closeCode: 1007),
        Case(name: "lone continuation byte", bytes: clientFrame(.text, [0x80]), closeCode: 1007),
        Case(name: "overlong slash", bytes: clientFrame(.text, [0xC0, 0xAF]), closeCode: 1007),
        Case(name: "overlong 3-byte", bytes: clientFrame(.text, [0xE0, 0x80, 0xAF]), closeCode: 1007),
        Case(name: "surrogate U+D800", bytes: clientFrame(.text, [0xED, 0xA0, 0x80]), closeCode: 1007),
        Case(name: "above U+10FFFF", bytes: clientFrame(.text, [0xF4, 0x90, 0x80, 0x80]), closeCode: 1007),
        Case(name: "text ends mid code point", bytes: clientFrame(.text, [0x61, 0xE2, 0x82]), closeCode: 1007),
        Case(name: "fragmented text ends mid code point",
             bytes: clientFrame(.text, [0xE2], fin: false) + clientFrame(.continuation, [0x82]), closeCode: 1007),
        Case(name: "close reason not UTF-8", bytes: clientFrame(.close, [0x03, 0xE8, 0xFF]), closeCode: 1007),
    ]

    @Test(arguments: cases)
    func rejects(_ testCase: Case) {
        let result = decodeAll(testCase.bytes, role: testCase.role)
        #expect(result.error?.closeCode == testCase.closeCode)
        #expect(result.messages.isEmpty)
    }

    @Test(arguments: [0, 999, 1004, 1005, 1006, 1012, 1013, 1014, 1015, 1016, 2000, 2999, 5000, 65535] as [UInt16])
    func invalidCloseCodes(code: UInt16) {
        let result = decodeAll(clientFrame(.close, [UInt8(code >> 8), UInt8(code & 0xFF)]))
        #expect(result.error?.closeCode == WebSocketCloseCode.protocolError)
    }

    @Test func invalidUTF8FailsBeforeTheFrameIsComplete() throws {
        var payload = [UInt8](repeating: 0x61, count: 20)
        payload[2] = 0xFF
        let frame = clientFrame(.text, payload)
        var decoder = WebSocketDecoder(role: .server)
        decoder.append(Array(frame[..<(6 + 5)]))  // header + first 5 payload bytes; the rest never arrives
        #expect(throws: WebSocketProtocolError(closeCode: 1007, reason: "Text message is not valid UTF-8.")) {
            try decoder.next()
        }
    }

    @Test func validPrefixOfAFrameWaitsForMore() throws {
        let frame = clientFrame(.text, [UInt8]("hé, partial"))
        var decoder = WebSocketDecoder(role: .server)
        decoder.append(Array(frame[..<(6 + 2)]))  // ends inside "é"
        #expect(try decoder.next() == nil)
        decoder.append(Array(frame[(6 + 2)...]))
        #expect(try decoder.next() == .text("hé, partial"))
    }

    @Test func invalidUTF8FailsInANonFinalFragment() throws {
        var decoder = WebSocketDecoder(role: .server)
        decoder.append(clientFrame(.text, [0x68, 0xC3], fin: false))
        #expect(try decoder.next() == nil)
        decoder.append(clientFrame(.continuation, [0x28], fin: false))
        #expect(throws: WebSocketProtocolError.self) { try decoder.next() }
    }

    @Test func oversizedFrameIsRejectedFromTheHeaderAlone() {
        let sevenBit = decodeAll([0x82, 0x80 | 101], maxFrameSize: 100, maxMessageSize: 1000)
        #expect(sevenBit.error?.closeCode == WebSocketCloseCode.messageTooBig)
        let sixteenBit = decodeAll([0x82, 0xFE, 0x01, 0x00], maxFrameSize: 255)
        #expect(sixteenBit.error?.closeCode == 1009)
        let sixtyFourBit = decodeAll([0x82, 0xFF, 0, 0, 0, 1, 0, 0, 0, 0])
        #expect(sixtyFourBit.error?.closeCode == 1009)
        let atLimit = decodeAll([0x82, 0x80 | 100] + Self.maskBytes, maxFrameSize: 100, maxMessageSize: 100)
        #expect(atLimit.error == nil)
    }

    @Test func oversizedMessageIsRejectedFromTheNextFragmentHeader() throws {
        var decoder = WebSocketDecoder(role: .server, maxFrameSize: 100, maxMessageSize: 150)
        decoder.append(clientFrame(.binary, [UInt8](repeating: 1, count: 100), fin: false))
        #expect(try decoder.next() == nil)
        decoder.append([0x80, 0x80 | 51])  // continuation header only, payload not sent
        #expect(throws: WebSocketProtocolError.self) { try decoder.next() }
        let result = decodeAll(clientFrame(.binary, [UInt8](repeating: 1, count: 100), fin: false) + [0x80, 0x80 | 51],
                               maxFrameSize: 100, maxMessageSize: 150)
        #expect(result.error?.closeCode == 1009)
    }
}
