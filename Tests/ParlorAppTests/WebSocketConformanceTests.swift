import Foundation
import ParlorApp
import ParlorCodec
import Testing

// Autobahn 1–5 (payload lengths, pings, reserved bits, opcodes, fragmentation) and frame and message limits.
// Handshake, UTF-8, closing, and robustness (Autobahn 9, heartbeat, slow consumers, bad input) are in the other
// WebSocketConformance*Tests files; helpers in WebSocketConformanceSupport.swift.

@Suite struct WebSocketConformanceFramingTests {
    // MARK: Autobahn 1: payload lengths, text and binary

    @Test(arguments: [0, 125])
    func pingPayloadLengths(length: Int) throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
            try socket.sendFrame(.ping, payload)
            #expect(try Conformance.nextPong(socket) == payload)
        }
    }

    @Test(arguments: [126, 127, 128, 65535, 65536])
    func textPayloadLengths(length: Int) throws {
        try withServer({ c in
            c.http.webSocket.maxFrameBytes = 1 << 17
            c.http.webSocket.maxMessageBytes = 1 << 17
            c.maxRequestBytes = 1 << 17
        }) { app in
            let socket = try Conformance.client(app)
            let message = Conformance.paddedPing(tid: "len\(length)", length: length)
            #expect(message.count == length)
            try socket.sendFrame(.text, message)
            try Conformance.expectPingReply(socket, tid: "len\(length)")
        }
    }

    @Test(arguments: [0, 125, 126, 65535, 65536])
    func binaryPayloadLengthsAreReadAndRefusedPolitely(length: Int) throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            try socket.sendFrame(.binary, [UInt8](repeating: 0xFE, count: length))
            #expect(try Conformance.nextErrorCode(socket) == "request:error:binary-unsupported")
            try socket.sendFrame(.text, Conformance.ping(tid: "after"))
            try Conformance.expectPingReply(socket, tid: "after")
        }
    }

    @Test func emptyTextMessageIsInvalidJSONNotAProtocolError() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            try socket.sendFrame(.text, [])
            #expect(try Conformance.nextErrorCode(socket) == "request:error:invalid-json")
            try socket.sendFrame(.text, Conformance.ping(tid: "after"))
            try Conformance.expectPingReply(socket, tid: "after")
        }
    }

    @Test func messagesInTheSameWriteAsTheHandshakeAreProcessed() throws {
        try withServer { app in
            let jwt = try token(app, "eager")
            let connection = try RawConnection(port: app.port)
            var bytes = Array("GET /ws?token=\(jwt) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(Conformance.sampleKey)\r\nSec-WebSocket-Version: 13\r\n\r\n".utf8)
            bytes += WebSocketFrameEncoder.frame(.ping, payload: Array("early".utf8), mask: Conformance.mask)
            bytes += WebSocketFrameEncoder.frame(.text, payload: Conformance.ping(tid: "early"), mask: Conformance.mask)
            try connection.send(bytes)
            let response = try connection.readResponse()
            #expect(response.status == 101)
            // The pong, then the reply, in order; session:success (sent by the rooms thread on open) anywhere.
            let messages = try Conformance.messages(3, on: connection)
            let texts = messages.compactMap { message -> String? in if case .text(let text) = message { text } else { nil } }
            #expect(texts.contains { $0.contains(#""session:success""#) }, "\(messages)")
            let pong = messages.firstIndex(of: .pong(Array("early".utf8)))
            let reply = messages.firstIndex { if case .text(let text) = $0 { text.contains("session:ping:success") && text.contains("early") } else { false } }
            #expect(pong != nil && reply != nil && pong! < reply!, "\(messages)")
        }
    }

    // MARK: Autobahn 2: pings and pongs

    @Test func pingsGetPongsWithTheSamePayload() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            let payloads: [[UInt8]] = [[], Array("Hello, world!".utf8), Array(0...124), [0x00, 0xFF, 0xFE, 0xFD], Array("κόσμε".utf8)]
            for payload in payloads {
                try socket.sendFrame(.ping, payload)
                #expect(try Conformance.nextPong(socket) == payload)
            }
            // Ten pings in one write: ten pongs, in order.
            var burst: [UInt8] = []
            for index in 0..<10 { burst += WebSocketFrameEncoder.frame(.ping, payload: [UInt8(index)], mask: Conformance.mask) }
            try socket.connection.send(burst)
            for index in 0..<10 { #expect(try Conformance.nextPong(socket) == [UInt8(index)]) }
            // A full 125-byte ping sent one byte at a time.
            let slow = [UInt8](repeating: 0x73, count: 125)
            try socket.connection.sendByteByByte(WebSocketFrameEncoder.frame(.ping, payload: slow, mask: Conformance.mask))
            #expect(try Conformance.nextPong(socket) == slow)
        }
    }

    @Test func unsolicitedPongsAreIgnored() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            try socket.sendFrame(.pong, [])
            try socket.sendFrame(.pong, Array("unsolicited".utf8))
            try socket.sendFrame(.text, Conformance.ping(tid: "after-pong"))
            // The reply is the next message: no pong was answered, nothing was closed.
            guard case .text(let reply) = try socket.nextMessage() else { Issue.record("expected the reply"); return }
            #expect(reply.contains("after-pong"))
        }
    }

    @Test func pingBetweenFragmentsIsAnsweredBeforeTheMessage() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            let message = Conformance.ping(tid: "frag")
            try socket.sendFrame(.text, Array(message[..<10]), fin: false)
            try socket.sendFrame(.ping, Array("between".utf8))
            try socket.sendFrame(.continuation, Array(message[10..<20]), fin: false)
            try socket.sendFrame(.pong, [1, 2, 3])
            try socket.sendFrame(.continuation, Array(message[20...]))
            #expect(try socket.nextMessage() == .pong(Array("between".utf8)))
            guard case .text(let reply) = try socket.nextMessage() else { Issue.record("expected the reply"); return }
            #expect(reply.contains("session:ping:success") && reply.contains(#""frag""#))
        }
    }

    @Test(arguments: [126, 1000])
    func controlPayloadOver125IsAProtocolError(length: Int) throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            try socket.sendFrame(.ping, [UInt8](repeating: 0x41, count: length))
            try Conformance.expectClose(socket, 1002)
        }
    }

    // MARK: Autobahn 3: reserved bits; masking

    @Test(arguments: [0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70] as [UInt8])
    func reservedBitsAreAProtocolError(rsv: UInt8) throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            // Alternate data and control frames, as Autobahn 3.x does.
            let opcode: UInt8 = rsv & 0x10 != 0 ? 0x1 : 0x9
            let payload = opcode == 0x1 ? Conformance.ping(tid: "rsv") : []
            try socket.connection.send(Conformance.frame(firstByte: 0x80 | rsv | opcode, payload))
            try Conformance.expectClose(socket, 1002, "RSV \(rsv)")
        }
    }

    @Test func unmaskedClientFrameIsAProtocolError() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            try socket.sendFrame(.text, Conformance.ping(tid: "bare"), masked: false)
            try Conformance.expectClose(socket, 1002)
        }
    }

    @Test func unmaskedControlFrameIsAProtocolError() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            try socket.sendFrame(.ping, [], masked: false)
            try Conformance.expectClose(socket, 1002)
        }
    }

    // MARK: Autobahn 4: opcodes

    @Test(arguments: [3, 4, 5, 6, 7, 11, 12, 13, 14, 15] as [UInt8])
    func reservedOpcodesAreAProtocolError(opcode: UInt8) throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            // A valid request first, then the reserved opcode, then one that must not be answered.
            try socket.sendFrame(.text, Conformance.ping(tid: "before"))
            var bytes = Conformance.frame(firstByte: 0x80 | opcode, opcode < 8 ? Array("data".utf8) : [])
            bytes += WebSocketFrameEncoder.frame(.text, payload: Conformance.ping(tid: "after"), mask: Conformance.mask)
            try socket.connection.send(bytes)
            try Conformance.expectPingReply(socket, tid: "before", "opcode \(opcode)")
            guard case .close(let code, _) = try socket.nextMessage() else { Issue.record("opcode \(opcode): expected a close"); return }
            #expect(code == 1002, "opcode \(opcode)")
            #expect(try Conformance.endsTCP(socket.connection), "opcode \(opcode)")
        }
    }

    // MARK: Autobahn 5: fragmentation

    @Test func controlFrameWithoutFinIsAProtocolError() throws {
        for opcode in [WebSocketOpcode.ping, .pong, .close] {
            try withServer { app in
                let socket = try Conformance.client(app)
                try socket.sendFrame(opcode, opcode == .close ? [0x03, 0xE8] : Array("x".utf8), fin: false)
                try Conformance.expectClose(socket, 1002, "\(opcode)")
            }
        }
    }

    @Test func continuationWithNothingToContinueIsAProtocolError() throws {
        for fin in [true, false] {
            try withServer { app in
                let socket = try Conformance.client(app)
                try socket.sendFrame(.continuation, Conformance.ping(tid: "orphan"), fin: fin)
                try Conformance.expectClose(socket, 1002, "fin \(fin)")
            }
        }
    }

    @Test func continuationAfterACompleteMessageIsAProtocolError() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            try socket.sendFrame(.text, Conformance.ping(tid: "done"))
            try socket.sendFrame(.continuation, Array(" ".utf8))
            try Conformance.expectPingReply(socket, tid: "done")
            try Conformance.expectClose(socket, 1002)
        }
    }

    @Test func newDataFrameInsideAFragmentedMessageIsAProtocolError() throws {
        for second in [WebSocketOpcode.text, .binary] {
            try withServer { app in
                let socket = try Conformance.client(app)
                let message = Conformance.ping(tid: "interleaved")
                try socket.sendFrame(.text, Array(message[..<5]), fin: false)
                try socket.sendFrame(second, Array(message[5...]))
                try Conformance.expectClose(socket, 1002, "\(second)")
            }
        }
    }

    @Test func fragmentedTextIsReassembled() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            let message = Conformance.ping(tid: "pieces")
            // Fragments of every size from 1 byte to the whole message, and empty fragments on either end.
            for size in 1...message.count {
                let tid = "pieces\(size)"
                let bytes = Conformance.ping(tid: tid)
                let chunks = stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min($0 + size, bytes.count)]) }
                try socket.sendFrame(.text, [], fin: false)
                for chunk in chunks { try socket.sendFrame(.continuation, chunk, fin: false) }
                try socket.sendFrame(.continuation, [])
                try Conformance.expectPingReply(socket, tid: tid, "fragment size \(size)")
            }
            // First fragment carries data, last is empty; a single-fragment message marked FIN.
            try socket.sendFrame(.text, Conformance.ping(tid: "first"), fin: false)
            try socket.sendFrame(.continuation, [])
            try Conformance.expectPingReply(socket, tid: "first")
        }
    }

    @Test func fragmentedBinaryIsReassembledIntoOneMessage() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            try socket.sendFrame(.binary, [1, 2], fin: false)
            try socket.sendFrame(.ping, [9])
            try socket.sendFrame(.continuation, [3], fin: false)
            try socket.sendFrame(.continuation, [4])
            try socket.sendFrame(.text, Conformance.ping(tid: "after-binary"))
            #expect(try Conformance.nextPong(socket) == [9])
            // One binary message: exactly one error, then the reply.
            #expect(try Conformance.nextErrorCode(socket) == "request:error:binary-unsupported")
            guard case .text(let reply) = try socket.nextMessage() else { Issue.record("expected the reply"); return }
            #expect(reply.contains("after-binary") && reply.contains("session:ping:success"))
        }
    }

    // MARK: Lengths and limits

    @Test func sixtyFourBitLengthWithTheTopBitSetIsAProtocolError() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            try socket.connection.send(Conformance.header64(length: 1 << 63 | 5))
            try Conformance.expectClose(socket, 1002)
        }
    }

    @Test func nonMinimalLengthEncodingsAreAccepted() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            let message = Conformance.ping(tid: "long-form")
            // The encoder's 2-byte header and mask key, replaced by the 8-byte length form and the same key.
            let masked = WebSocketFrameEncoder.frame(.text, payload: message, mask: Conformance.mask).dropFirst(6)
            try socket.connection.send(Conformance.header64(length: UInt64(message.count)) + masked)
            try Conformance.expectPingReply(socket, tid: "long-form")
        }
    }

    @Test func frameOverTheLimitIsRefusedFromItsHeader() throws {
        try withServer { app in
            #expect(app.configuration.http.webSocket.maxFrameBytes == 65536)
            for withMask in [true, false] {
                let socket = try Conformance.client(app)
                socket.connection.setTimeout(2)
                // Only the header: the refusal must not wait for 65537 bytes that never come.
                try socket.connection.send(Conformance.header64(length: 65537, withMask: withMask))
                try Conformance.expectClose(socket, 1009, "mask key sent: \(withMask)")
            }
            // The limit itself is fine.
            let socket = try Conformance.client(app)
            try socket.sendFrame(.binary, [UInt8](repeating: 0, count: 65536))
            #expect(try Conformance.nextErrorCode(socket) == "request:error:binary-unsupported")
        }
    }

    @Test func hugeFrameHeaderIsRefusedAsTooBig() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            socket.connection.setTimeout(2)
            try socket.connection.send(Conformance.header64(opcode: 0x82, length: UInt64(Int64.max)))
            try Conformance.expectClose(socket, 1009)
        }
    }

    @Test func fragmentedMessageOverTheLimitIsRefused() throws {
        try withServer({ c in
            c.http.webSocket.maxFrameBytes = 40_000
            c.http.webSocket.maxMessageBytes = 50_000
        }) { app in
            let socket = try Conformance.client(app)
            socket.connection.setTimeout(2)
            // Each frame is within the frame limit; the second takes the message past the message limit, which
            // must be refused from its header.
            try socket.sendFrame(.text, [UInt8](repeating: 0x20, count: 30_000), fin: false)
            var header = Conformance.header64(opcode: 0x00, length: 30_000)
            header[0] = 0x80  // FIN continuation
            try socket.connection.send(header)
            try Conformance.expectClose(socket, 1009)

            // Many small fragments add up the same way.
            let small = try Conformance.client(app)
            let chunk = [UInt8](repeating: 0x20, count: 1000)
            try small.sendFrame(.text, chunk, fin: false)
            for _ in 0..<60 { try? small.sendFrame(.continuation, chunk, fin: false) }
            try Conformance.expectClose(small, 1009)
        }
    }
}
