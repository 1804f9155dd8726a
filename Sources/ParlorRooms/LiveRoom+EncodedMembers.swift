import ParlorProtocol

extension LiveRoom {
    /// The joined members as the JSON array join replies carry, in join order: the bytes
    /// `JSONValue.array(sortedMembers.map { record(of: $0).json }).encoded()` gives, but each member is encoded
    /// once and its bytes reused until it changes (see `LiveRoom.joinOrder`).
    func encodedMemberList() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(2 + joinOrder.count * ((joinOrder.isEmpty ? 0 : encodedRecord(at: 0).count) + 1))
        output.append(UInt8(ascii: "["))
        for position in joinOrder.indices {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            output.append(contentsOf: encodedRecord(at: position))
        }
        output.append(UInt8(ascii: "]"))
        return output
    }
}
