import ParlorProtocol

extension MemberRecord {
    /// The bytes `json.encoded()` gives, written field by field: building the `JSONValue` tree (four nested objects,
    /// each key looked up as it is added) cost more than everything else a join does to its own member record.
    public func encoded() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256 + user.name.utf8.count)
        user.appendMemberOpening(memberID: memberID, to: &output)
        output.append(contentsOf: #","state":"#.utf8)
        JSONValue.string(state.rawValue).write(to: &output)
        output.append(contentsOf: #","timestamp":{"joined":"#.utf8)
        JSONValue.string(Timestamp.iso8601(milliseconds: joinedAt)).write(to: &output)
        if let leftAt {
            output.append(contentsOf: #","left":"#.utf8)
            JSONValue.string(Timestamp.iso8601(milliseconds: leftAt)).write(to: &output)
        }
        output.append(contentsOf: #"},"media":{"audio_settings":{"enabled":"#.utf8)
        output.append(contentsOf: (audioEnabled ? "true" : "false").utf8)
        output.append(contentsOf: #","muted":"#.utf8)
        output.append(contentsOf: (audioMuted ? "true" : "false").utf8)
        output.append(contentsOf: #"}},"role":"#.utf8)
        JSONValue.string(role.rawValue).write(to: &output)
        output.append(contentsOf: #","hand_raised":"#.utf8)
        output.append(contentsOf: (handRaisedAt != nil ? "true" : "false").utf8)
        output.append(contentsOf: #","hand_raised_at":"#.utf8)
        if let handRaisedAt {
            JSONValue.string(Timestamp.iso8601(milliseconds: handRaisedAt)).write(to: &output)
        } else {
            output.append(contentsOf: "null".utf8)
        }
        output.append(UInt8(ascii: "}"))
        return output
    }
}

extension User {
    /// `{"member_id":…,"user":{"id":…,"name":…}`, left open: how a member record and the bodies of `member:joined`
    /// and `member:left` begin.
    func appendMemberOpening(memberID: String, to output: inout [UInt8]) {
        output.append(contentsOf: #"{"member_id":"#.utf8)
        JSONValue.string(memberID).write(to: &output)
        output.append(contentsOf: #","user":{"id":"#.utf8)
        JSONValue.string(id).write(to: &output)
        output.append(contentsOf: #","name":"#.utf8)
        JSONValue.string(name).write(to: &output)
        output.append(UInt8(ascii: "}"))
    }
}
