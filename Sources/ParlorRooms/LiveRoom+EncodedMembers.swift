import ParlorProtocol

extension LiveRoom {
    /// The joined members as the JSON array join replies carry, in join order: the bytes
    /// `JSONValue.array(sortedMembers.map { record(of: $0).json }).encoded()` gives, but each member is encoded
    /// once and its bytes reused until it changes (see `LiveMember.encodedRecord`).
    func encodedMemberList() -> [UInt8] {
        let sorted = sortedMembers
        var output: [UInt8] = []
        output.reserveCapacity(2 + sorted.count * ((sorted.first?.encodedRecord?.count ?? 256) + 1))
        output.append(UInt8(ascii: "["))
        for (index, member) in sorted.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            if let bytes = member.encodedRecord {
                output.append(contentsOf: bytes)
            } else {
                let bytes = record(of: member).json.encoded()
                keepEncodedRecord(bytes, of: member.id)
                output.append(contentsOf: bytes)
            }
        }
        output.append(UInt8(ascii: "]"))
        return output
    }
}
