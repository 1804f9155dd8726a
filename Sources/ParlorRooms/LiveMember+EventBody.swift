import ParlorProtocol

extension LiveMember {
    /// The body of `member:joined`, and with `reason` of `member:left`: the bytes of
    /// `["member_id": id, "user": user.json, "reason": reason]` encoded, written without building that tree (its
    /// three objects, their keys and its encoding were ~8,000 instructions of every join and leave).
    func eventBody(reason: LeaveReason? = nil) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(96 + user.name.utf8.count)
        user.appendMemberOpening(memberID: id, to: &output)
        if let reason {
            output.append(contentsOf: #","reason":"#.utf8)
            JSONValue.string(reason.rawValue).write(to: &output)
        }
        output.append(UInt8(ascii: "}"))
        return output
    }
}
