/// One live connection per session (issue 34): which connection holds each session (its own, or the last that
/// resumed it), so a resume can take the session from the connection holding it. It owns that record; it is
/// confined to the rooms thread (`RoomsService` calls it there), so it is not Sendable.
final class SessionHolders {
    /// The connection holding each session.
    private var holders: [String: ClientID] = [:]
    /// The sessions each connection holds: its own, and those it resumed.
    private var held: [ClientID: [String]] = [:]

    /// Records that `clientID` holds `sessionID`.
    func hold(_ sessionID: String, on clientID: ClientID) {
        holders[sessionID] = clientID
        held[clientID, default: []].append(sessionID)
    }

    /// The session moves to `clientID`. Returns the connection that held it, if that one is still connected
    /// (`isConnected`): it must be closed, since only one connection may replay a session.
    func takeOver(_ sessionID: String, by clientID: ClientID, isConnected: (ClientID) -> Bool) -> ClientID? {
        var previous: ClientID?
        if let holder = holders[sessionID], holder != clientID, isConnected(holder) {
            held[holder]?.removeAll { $0 == sessionID }
            previous = holder
        }
        if holders[sessionID] != clientID { hold(sessionID, on: clientID) }
        return previous
    }

    /// A closed connection holds no session any more.
    func release(_ clientID: ClientID) {
        for sessionID in held.removeValue(forKey: clientID) ?? [] where holders[sessionID] == clientID {
            holders[sessionID] = nil
        }
    }
}
