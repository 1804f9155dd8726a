import Testing
@testable import ParlorCodec

@Suite struct WebSocketCodecTests {
    @Test func encoderMatchesRFCExamples() {
        #expect(WebSocketFrameEncoder.text("Hello") == [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        #expect(WebSocketFrameEncoder.text("Hello", mask: testMask)
            == [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
        #expect(WebSocketFrameEncoder.frame(.text, payload: [UInt8]("Hel"), fin: false) == [0x01, 0x03, 0x48, 0x65, 0x6C])
    }

    @Test(arguments: [0, 125, 126, 65535, 65536])
    func roundTripsPayloadLengths(length: Int) {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let expectedLengthByte: UInt8 = length < 126 ? UInt8(length) : length <= 0xFFFF ? 126 : 127
        let limit = 1 << 20

        let masked = clientFrame(.binary, payload)
        #expect(masked[1] == 0x80 | expectedLengthByte)
        #expect(masked.count == 2 + (length < 126 ? 0 : length <= 0xFFFF ? 2 : 8) + 4 + length)
        let server = decodeAll(masked, role: .server, maxFrameSize: limit, maxMessageSize: limit)
        #expect(server.error == nil)
        #expect(server.messages == [.binary(payload)])

        let unmasked = WebSocketFrameEncoder.frame(.binary, payload: payload)
        #expect(unmasked[1] == expectedLengthByte)
        let client = decodeAll(unmasked, role: .client, maxFrameSize: limit, maxMessageSize: limit)
        #expect(client.messages == [.binary(payload)])
    }

    @Test func decodesWhenFedInOddPieces() throws {
        let payload = (0..<1000).map { UInt8(truncatingIfNeeded: $0) }
        let bytes = clientFrame(.binary, payload) + clientFrame(.text, [UInt8]("tail"))
        var decoder = WebSocketDecoder(role: .server)
        var messages: [WebSocketMessage] = []
        var index = 0
        var step = 1
        while index < bytes.count {
            let end = min(bytes.count, index + step)
            decoder.append(Array(bytes[index..<end]))
            while let message = try decoder.next() {
                messages.append(message)
            }
            index = end
            step = step % 13 + 2
        }
        #expect(messages == [.binary(payload), .text("tail")])
    }

    @Test func fragmentedTextWithCharactersSplitAcrossFrames() throws {
        let text = "héllo €uro 𝄞 clef"
        let bytes = [UInt8](text)
        // Cut inside "é" (2 bytes), inside "€" (3 bytes) and inside "𝄞" (4 bytes).
        let cuts = [2, 9, 17]
        #expect(bytes[1] == 0xC3 && bytes[7] == 0xE2 && bytes[14] == 0xF0)
        var decoder = WebSocketDecoder(role: .server)
        decoder.append(clientFrame(.text, Array(bytes[..<cuts[0]]), fin: false))
        #expect(try decoder.next() == nil)
        decoder.append(clientFrame(.continuation, Array(bytes[cuts[0]..<cuts[1]]), fin: false))
        decoder.append(clientFrame(.continuation, Array(bytes[cuts[1]..<cuts[2]]), fin: false))
        #expect(try decoder.next() == nil)
        decoder.append(clientFrame(.continuation, Array(bytes[cuts[2]...])))
        #expect(try decoder.next() == .text(text))
        #expect(try decoder.next() == nil)
    }

    @Test func controlFramesBetweenFragments() throws {
        let bytes = clientFrame(.text, [UInt8]("frag"), fin: false)
            + clientFrame(.ping, [1, 2, 3])
            + clientFrame(.continuation, [UInt8]("ment"), fin: false)
            + clientFrame(.pong, [])
            + clientFrame(.continuation, [UInt8]("ed"))
        let result = decodeAll(bytes)
        #expect(result.error == nil)
        #expect(result.messages == [.ping([1, 2, 3]), .pong([]), .text("fragmented")])
    }

    @Test func emptyFragmentsAndNonMinimalLengthAreAccepted() {
        // Length 5 encoded in the 16-bit form, then an empty binary message made of two empty fragments.
        var nonMinimal: [UInt8] = [0x82, 0x80 | 126, 0x00, 0x05, 0, 0, 0, 0]
        nonMinimal += [1, 2, 3, 4, 5]
        let bytes = nonMinimal + clientFrame(.binary, [], fin: false) + clientFrame(.continuation, [])
        let result = decodeAll(bytes)
        #expect(result.error == nil)
        #expect(result.messages == [.binary([1, 2, 3, 4, 5]), .binary([])])
    }

    @Test(arguments: [
        WebSocketCloseCode.normal, WebSocketCloseCode.goingAway, WebSocketCloseCode.protocolError,
        WebSocketCloseCode.unsupportedData, 1007, 1008, 1009, 1010, 1011, 3000, 4999,
    ])
    func validCloseCodes(code: UInt16) {
        let result = decodeAll(WebSocketFrameEncoder.close(code: code, reason: "bye ✓", mask: testMask))
        #expect(result.error == nil)
        #expect(result.messages == [.close(code: code, reason: "bye ✓")])
    }

    @Test func emptyCloseHasNoCode() {
        #expect(decodeAll(clientFrame(.close, [])).messages == [.close(code: nil, reason: "")])
    }

    @Test func closeReasonIsTruncatedAtACharacterBoundary() {
        let frame = WebSocketFrameEncoder.close(code: 1000, reason: String(repeating: "é", count: 100))
        #expect(frame[1] == 124)  // 2 code bytes + 61 two-byte characters; a 62nd would need 125 + 1
        let result = decodeAll(frame, role: .client)
        #expect(result.messages == [.close(code: 1000, reason: String(repeating: "é", count: 61))])
    }

    @Test func decoderStaysDeadAfterAnError() {
        var decoder = WebSocketDecoder(role: .server)
        decoder.append([0xC1, 0x80, 0, 0, 0, 0])  // RSV1
        #expect(throws: WebSocketProtocolError.self) { try decoder.next() }
        decoder.append(clientFrame(.text, [UInt8]("ok")))
        #expect(throws: WebSocketProtocolError.self) { try decoder.next() }
    }

    /// An idle WebSocket holds no receive storage: the decoder's buffer is released whenever it empties, after a
    /// small message, a large one and a message split across reads alike, and decoding goes on afterwards.
    @Test func decoderReleasesItsBufferWhenEmpty() throws {
        var decoder = WebSocketDecoder(role: .server, maxFrameSize: 1 << 20, maxMessageSize: 1 << 20)
        for text in ["hi", String(repeating: "x", count: 3000), String(repeating: "y", count: 100_000)] {
            let frame = clientFrame(.text, Array(text.utf8))
            decoder.append(Array(frame[..<(frame.count / 2)]))
            #expect(try decoder.next() == nil)
            decoder.append(Array(frame[(frame.count / 2)...]))
            #expect(try decoder.next() == .text(text))
            #expect(decoder.buffer.storage.capacity == 0, "\(text.utf8.count)-byte message")
        }
        // A read that ends inside the next frame keeps only that frame's bytes.
        let two = clientFrame(.text, Array("one".utf8)) + clientFrame(.text, Array("two".utf8))
        decoder.append(Array(two.dropLast(2)))
        #expect(try decoder.next() == .text("one"))
        #expect(try decoder.next() == nil)
        decoder.append(Array(two.suffix(2)))
        #expect(try decoder.next() == .text("two"))
        #expect(decoder.buffer.storage.capacity == 0)
    }
}
