import Foundation
import ParlorApp
import ParlorCodec
import Testing

/// Autobahn 6: UTF-8 handling of text messages, split anywhere, validated as it arrives.
@Suite struct WebSocketConformanceUTF8Tests {
    /// "κόσμε" (2-byte sequences), a 3-byte "€" and a 4-byte emoji, inside the tid of a session:ping.
    static let tid = "κόσμε€🎉"

    @Test func multiByteCharactersSplitAcrossFramesAtEveryByte() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            let message = Conformance.ping(tid: Self.tid)
            #expect(message.count > Self.tid.count + 30)
            for split in 1..<message.count {
                try socket.sendFrame(.text, Array(message[..<split]), fin: false)
                try socket.sendFrame(.continuation, Array(message[split...]))
                let reply = try Conformance.expectPingReply(socket, tid: Self.tid, "split at byte \(split)")
                if reply == nil { break }
            }
            // Three fragments, both cuts inside the emoji.
            guard let emoji = message.firstIndex(of: 0xF0) else { Issue.record("no emoji"); return }
            try socket.sendFrame(.text, Array(message[..<(emoji + 1)]), fin: false)
            try socket.sendFrame(.continuation, Array(message[(emoji + 1)..<(emoji + 3)]), fin: false)
            try socket.sendFrame(.continuation, Array(message[(emoji + 3)...]))
            try Conformance.expectPingReply(socket, tid: Self.tid, "cuts inside the emoji")
        }
    }

    @Test func oneByteFragmentsAndOneByteWrites() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            let message = Conformance.ping(tid: Self.tid)
            try socket.sendFrame(.text, [message[0]], fin: false)
            for byte in message.dropFirst().dropLast() { try socket.sendFrame(.continuation, [byte], fin: false) }
            try socket.sendFrame(.continuation, [message[message.count - 1]])
            try Conformance.expectPingReply(socket, tid: Self.tid, "one-byte fragments")
            // One frame, delivered one TCP write per byte (header, mask key and payload alike).
            try socket.connection.sendByteByByte(WebSocketFrameEncoder.frame(.text, payload: message, mask: Conformance.mask))
            try Conformance.expectPingReply(socket, tid: Self.tid, "one-byte writes")
        }
    }

    static let invalidSequences: [(String, [UInt8])] = [
        ("lone continuation byte", [0x80]),
        ("overlong 2-byte NUL", [0xC0, 0x80]),
        ("overlong 2-byte C1", [0xC1, 0xBF]),
        ("overlong 3-byte", [0xE0, 0x80, 0xAF]),
        ("overlong 4-byte", [0xF0, 0x80, 0x80, 0xAF]),
        ("UTF-16 surrogate", [0xED, 0xA0, 0x80]),
        ("beyond U+10FFFF", [0xF4, 0x90, 0x80, 0x80]),
        ("F5 lead byte", [0xF5, 0x80, 0x80, 0x80]),
        ("FE", [0xFE]),
        ("FF", [0xFF]),
        ("lead byte then ASCII", [0xCE, 0x41]),
        ("3-byte lead then ASCII", [0xE2, 0x82, 0x41]),
    ]

    @Test func invalidUTF8Is1007() throws {
        try withServer { app in
            for (label, sequence) in Self.invalidSequences {
                // Inside a JSON string, in one frame and across a fragment boundary right after the first byte.
                let message = Array(#"{"type":"session:ping","tid":"κόσμε"#.utf8) + sequence + Array(#"x"}"#.utf8)
                let whole = try Conformance.client(app)
                try whole.sendFrame(.text, message)
                try Conformance.expectClose(whole, 1007, "\(label), one frame")

                let split = try Conformance.client(app)
                let cut = message.count - 3 - sequence.count + 1  // right after the sequence's first byte
                try split.sendFrame(.text, Array(message[..<cut]), fin: false)
                try split.sendFrame(.continuation, Array(message[cut...]))
                try Conformance.expectClose(split, 1007, "\(label), fragmented")
            }
        }
    }

    @Test func invalidUTF8FailsFastInsideAnIncompleteFrame() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            socket.connection.setTimeout(2)
            // A 1000-byte text frame of which only the first 40 bytes are ever sent; byte 30 is invalid.
            var payload = [UInt8](repeating: 0x61, count: 1000)
            payload[30] = 0xFF
            let frame = WebSocketFrameEncoder.frame(.text, payload: payload, mask: Conformance.mask)
            let headerLength = 2 + 2 + 4
            try socket.connection.send(Array(frame[..<(headerLength + 40)]))
            try Conformance.expectClose(socket, 1007)
        }
    }

    @Test func invalidUTF8FailsFastInAnUnfinishedMessage() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            socket.connection.setTimeout(2)
            // The first fragment is invalid; the rest of the message never comes.
            try socket.sendFrame(.text, Array("κόσμε".utf8) + [0xED, 0xA0, 0x80], fin: false)
            try Conformance.expectClose(socket, 1007)
        }
    }

    @Test func textMessageEndingMidCodePointIs1007() throws {
        for (label, tail) in [("2 of 3 bytes", [0xE2, 0x82]), ("1 of 4 bytes", [0xF0]), ("3 of 4 bytes", [0xF0, 0x9F, 0x8E])] as [(String, [UInt8])] {
            try withServer { app in
                let whole = try Conformance.client(app)
                try whole.sendFrame(.text, Array("ab".utf8) + tail)
                try Conformance.expectClose(whole, 1007, "\(label), one frame")

                // The incomplete sequence is cut between fragments, and the final (empty) fragment ends the message.
                let fragmented = try Conformance.client(app)
                try fragmented.sendFrame(.text, Array("ab".utf8) + tail, fin: false)
                try fragmented.sendFrame(.continuation, [])
                try Conformance.expectClose(fragmented, 1007, "\(label), fragmented")
            }
        }
    }

    @Test func validUTF8EdgeCodePointsAreAccepted() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            // U+007F, U+0080, U+07FF, U+0800, U+D7FF, U+E000, U+FFFD, U+FFFF, U+10000, U+10FFFF.
            let scalars: [UInt32] = [0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFD, 0xFFFF, 0x10000, 0x10FFFF]
            for scalar in scalars {
                let character = String(Character(Unicode.Scalar(scalar)!))
                let tid = "cp\(String(scalar, radix: 16))" + (scalar == 0x7F ? "" : character)
                try socket.sendFrame(.text, Conformance.ping(tid: tid))
                try Conformance.expectPingReply(socket, tid: tid, "U+\(String(scalar, radix: 16))")
            }
        }
    }
}

/// Autobahn 7: the closing handshake.
@Suite struct WebSocketConformanceCloseTests {
    private static func closePayload(_ code: UInt16, _ reason: [UInt8] = []) -> [UInt8] {
        [UInt8(code >> 8), UInt8(code & 0xFF)] + reason
    }

    @Test func normalCloseIsEchoedAndTCPIsClosed() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            try socket.sendFrame(.close, Self.closePayload(1000, Array("bye".utf8)))
            try Conformance.expectClose(socket, 1000)
        }
    }

    @Test func nothingIsAnsweredAfterTheClientsClose() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            var bytes = WebSocketFrameEncoder.frame(.close, payload: Self.closePayload(1000), mask: Conformance.mask)
            bytes += WebSocketFrameEncoder.frame(.text, payload: Conformance.ping(tid: "late"), mask: Conformance.mask)
            bytes += WebSocketFrameEncoder.frame(.ping, payload: Array("late".utf8), mask: Conformance.mask)
            bytes += WebSocketFrameEncoder.frame(.close, payload: Self.closePayload(3000), mask: Conformance.mask)
            try socket.connection.send(bytes)
            // The close is the very next message (and the only one): no reply, no pong, no second close.
            #expect(try socket.nextMessage() == .close(code: 1000, reason: ""))
            do {
                let extra = try socket.nextMessage()
                Issue.record("unexpected \(extra) after the close")
            } catch let error as TestFailure {
                #expect(error.description == "connection closed")
            }
        }
    }

    @Test func emptyCloseIsAnsweredAndTCPIsClosed() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            try socket.sendFrame(.close, [])
            let code = try Conformance.closeCode(socket)
            #expect(code == nil || code == 1000)
            #expect(try Conformance.endsTCP(socket.connection))
        }
    }

    @Test func onePayloadByteIsAProtocolError() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            try socket.sendFrame(.close, [0x03])
            try Conformance.expectClose(socket, 1002)
        }
    }

    @Test(arguments: [0, 1, 999, 1004, 1005, 1006, 1012, 1013, 1014, 1015, 1016, 1100, 2000, 2999, 5000, 65535] as [UInt16])
    func invalidCloseCodesAreAProtocolError(code: UInt16) throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            try socket.sendFrame(.close, Self.closePayload(code))
            try Conformance.expectClose(socket, 1002, "code \(code)")
        }
    }

    @Test(arguments: [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999] as [UInt16])
    func validCloseCodesAreEchoed(code: UInt16) throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            try socket.sendFrame(.close, Self.closePayload(code, Array("reason κόσμε".utf8)))
            try Conformance.expectClose(socket, code, "code \(code)")
        }
    }

    @Test func closeReasonLengthLimit() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            try socket.sendFrame(.close, Self.closePayload(1000, [UInt8](repeating: 0x2A, count: 123)))
            try Conformance.expectClose(socket, 1000, "123-byte reason")
            // 2 + 124 bytes is over the 125-byte control frame limit.
            let over = try Conformance.client(app)
            try over.sendFrame(.close, Self.closePayload(1000, [UInt8](repeating: 0x2A, count: 124)))
            try Conformance.expectClose(over, 1002, "124-byte reason")
        }
    }

    @Test func closeReasonMustBeUTF8() throws {
        let reasons: [(String, [UInt8])] = [
            ("surrogate", Array("κόσμε".utf8) + [0xED, 0xA0, 0x80]),
            ("truncated", Array("ok".utf8) + [0xE2, 0x82]),
            ("FF", [0xFF]),
        ]
        for (label, reason) in reasons {
            try withServer { app in
                let socket = try Conformance.client(app)
                try socket.sendFrame(.close, Self.closePayload(1000, reason))
                try Conformance.expectClose(socket, 1007, "\(label)")
            }
        }
    }

    @Test func closeBetweenFragmentsIsHonoured() throws {
        try withServer { app in
            let socket = try Conformance.client(app)
            let message = Conformance.ping(tid: "never")
            try socket.sendFrame(.text, Array(message[..<10]), fin: false)
            try socket.sendFrame(.close, Self.closePayload(1000))
            try? socket.sendFrame(.continuation, Array(message[10...]))
            // The close is answered; the half message is never.
            #expect(try socket.nextMessage() == .close(code: 1000, reason: ""))
            #expect(try Conformance.endsTCP(socket.connection))
        }
    }

    @Test func serverStaysHealthyAfterManyCloses() throws {
        try withServer { app in
            for code in [1000, 1001, 4000] as [UInt16] {
                let socket = try Conformance.client(app)
                try socket.sendFrame(.close, Self.closePayload(code))
                try Conformance.expectClose(socket, code)
            }
            let survivor = try Conformance.client(app)
            _ = try survivor.call("session:ping")
            #expect(Conformance.eventually(within: 3) { app.server.openConnectionCount == 1 })
        }
    }
}
