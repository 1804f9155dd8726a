import Foundation
import ParlorCodec
import ParlorProtocol
import Testing

/// The builders produce exactly the bytes the protocol documents, and the client's JSON conveniences behave.
@Suite struct ProtocolFrameTests {
    /// The payload of an unmasked server text frame under 64 KiB.
    static func text(_ frame: [UInt8]) -> String {
        #expect(frame[0] == 0x81)
        return String(decoding: frame.dropFirst(frame[1] == 126 ? 4 : 2), as: UTF8.self)
    }

    @Test func successRepliesEchoTheRequestTypeAndTid() {
        let frame = ProtocolFrame.success(.conversationLeave, tid: "7", body: [:])
        #expect(Self.text(frame) == #"{"type":"conversation:leave:success","tid":"7","body":{}}"#)
    }

    @Test func aSuccessWithAnEncodedBodyIsTheSameFrameAsWithTheTree() {
        let members: JSONValue = [["member_id": "MEM-1", "user": ["id": "u\"1", "name": "Zoë\n"]], ["state": "joined"]]
        let body: JSONValue = ["member_id": "MEM-1", "cid": "RM-1", "members": members, "last_event_id": 42, "locked": false]
        var writer = JSONObjectWriter()
        writer.field("member_id", "MEM-1")
        writer.field("cid", "RM-1")
        writer.field("members", encoded: members.encoded())
        writer.field("last_event_id", 42)
        writer.field("locked", false)
        let spliced = writer.finish()
        #expect(spliced == body.encoded())
        for tid: JSONValue in ["7", 3, nil] {
            #expect(ProtocolFrame.success(.conversationJoin, tid: tid, encodedBody: spliced)
                    == ProtocolFrame.success(.conversationJoin, tid: tid, body: body))
        }
        #expect(JSONObjectWriter().finish() == Array("{}".utf8))
    }

    /// The typed fields (keys written in code) give the bytes of the same object as a tree.
    @Test func typedFieldsWriteWhatTheTreeEncodes() {
        var writer = JSONObjectWriter()
        writer.field("type", string: "member:joined")
        writer.field("from", string: nil)
        writer.field("id", integer: -12)
        writer.field("at", integer: 1_796_144_078_000)
        writer.field("zero", integer: 0)
        writer.field("text", string: "a\"b\\c\nzoë")
        writer.field("tid", JSONValue("7"))
        let tree: JSONValue = ["type": "member:joined", "from": nil, "id": -12, "at": 1_796_144_078_000, "zero": 0,
                               "text": "a\"b\\c\nzoë", "tid": "7"]
        #expect(String(decoding: writer.finish(), as: UTF8.self) == String(decoding: tree.encoded(), as: UTF8.self))
    }

    @Test func errorsCarryTheCodeAndTheRequestTypeAsSent() {
        let frame = ProtocolFrame.error(tid: 3, code: .requestUnknownType, detail: "unknown request type x:y", requestType: "x:y")
        #expect(Self.text(frame)
                == #"{"type":"error","tid":3,"body":{"code":"request:error:unknown-type","detail":"unknown request type x:y","request_type":"x:y"}}"#)
        #expect(Self.text(ProtocolFrame.error(tid: nil, code: .requestTooLarge, detail: "d"))
                == #"{"type":"error","tid":null,"body":{"code":"request:error:too-large","detail":"d"}}"#)
    }

    @Test func eventsPutTheirTypeFirst() {
        let frame = ProtocolFrame.event(.audioSpeakingOn, ["cid": "RM-1", "from": "MEM-1", "body": [:]])
        #expect(Self.text(frame) == #"{"type":"audio:speaking:on","cid":"RM-1","from":"MEM-1","body":{}}"#)
    }

    @Test func relayedEventsAreSpelledAsTheirRequests() {
        #expect(EventType.rtcIce.rawValue == RequestType.rtcIce.rawValue)
        #expect(EventType.audioMuteOff.rawValue == RequestType.audioMuteOff.rawValue)
        #expect(RequestType.sessionResume.successType == "session:resume:success")
    }

    @Test func parseErrorsMapToHTTPCodes() {
        #expect(ErrorCode(HTTPParseError.Failure.headerTooLarge) == .httpHeaderTooLarge)
        #expect(ErrorCode.httpHeaderTooLarge.httpStatus == 431)
        #expect(ErrorCode.roomClosed.httpStatus == 410)
    }

    @Test func jsonValuesDecodeAndEncodeThroughCodable() throws {
        let text = #"{"b":[1,2.5,true,null],"a":"x"}"#
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(value == ["a": "x", "b": [1, 2.5, true, nil]])
        let encoded = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: encoded) == value)
        #expect(value["b"]?.arrayValue?.first?.integerValue == 1)
        #expect(value["b"]?.arrayValue?[1].integerValue == nil)
    }

    @Test func sortingKeysMakesEqualObjectsEncodeAlike() {
        let first: JSONValue = ["b": 1, "a": ["d": 2, "c": 3]]
        #expect(first.sortingKeys().encodedString() == #"{"a":{"c":3,"d":2},"b":1}"#)
        #expect(JSONValue.object(JSONObject(sortingKeysOf: ["z": 1, "y": 2])).description == #"{"y":2,"z":1}"#)
        #expect(Set([first, first.sortingKeys(), first]).count == 2)
        #expect(JSONValue.parse("[1,") == nil)
        #expect(JSONValue.parse(Array(#"{"k":"v"}"#.utf8))?["k"] == "v")
    }
}
