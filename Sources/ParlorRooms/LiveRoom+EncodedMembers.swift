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

    /// A summary-mode join reply's list: the stage (moderators, speakers), the raised hands, the joiner (`memberID`)
    /// and the first `audiencePage` listeners, in join order, with the audience's size and the cursor after that page
    /// when more listeners follow. It reads the stage and the hands from their own sets and only the page of the
    /// audience, not the whole room.
    func summaryMemberList(audiencePage: Int, including memberID: String) -> (members: [UInt8], audienceCount: Int, cursor: PageCursor?) {
        var positions: Set<Int> = []
        for userID in stageUsers.union(hands.keys) {
            if let member = member(forUser: userID) { positions.insert(joinOrderPosition(of: member)) }
        }
        if let joiner = member(memberID) { positions.insert(joinOrderPosition(of: joiner)) }
        var listeners = 0
        var cursor: PageCursor?
        var lastListener: JoinSlot?
        for (position, slot) in joinOrder.enumerated() {
            guard let member = members[slot.id], roles[member.user.id] == .listener else { continue }
            if listeners == audiencePage {
                cursor = lastListener.map { PageCursor(number: $0.joinedAt, id: $0.id) }
                break
            }
            listeners += 1
            lastListener = slot
            positions.insert(position)
        }
        var output: [UInt8] = [UInt8(ascii: "[")]
        for (index, position) in positions.sorted().enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            output.append(contentsOf: encodedRecord(at: position))
        }
        output.append(UInt8(ascii: "]"))
        return (output, audienceCount, cursor)
    }

    /// conversation:members with a role: the joined members with `role`, in join order, after `cursor` (the
    /// listing's keyset, so a summary join reply's `audience_cursor` continues it).
    func joinedMembers(role: MemberRole, after cursor: PageCursor?, pageSize: Int) -> Page<MemberRecord> {
        var start = 0
        if let cursor {
            start = joinOrderIndex(joinedAt: cursor.number, id: cursor.id)
            if start < joinOrder.count, joinOrder[start].id == cursor.id, joinOrder[start].joinedAt == cursor.number { start += 1 }
        }
        var items: [MemberRecord] = []
        for slot in joinOrder[start...] where items.count <= pageSize {
            guard let member = members[slot.id], self.role(of: member.user.id) == role else { continue }
            items.append(record(of: member))
        }
        return Page(items: items, pageSize: pageSize) { PageCursor(number: $0.joinedAt, id: $0.memberID) }
    }
}
