/// End-to-end encrypted rooms (issue 40; docs/e2ee.md): the messages a Swift app needs to take part in the key
/// exchange and the encrypted chat. The cryptography is the app's: the server (and this client library) only carry
/// what the app made.
extension ParlorSession {
    /// e2ee:key: `body` (the app's key message, at most 16 KiB of JSON; `cid` is set to `roomID`) goes unread to
    /// every other joined member of the room, who receive it as an event of type `.e2eeKey` with `from` your member
    /// id. Throws `member:error:not-joined`, `e2ee:error:too-large`, or `request:error:invalid-field` for a room that
    /// is not encrypted.
    public func sendKey(_ body: [String: JSONValue], in roomID: String) async throws(ParlorError) {
        var message = body
        message["cid"] = .string(roomID)
        _ = try await request(.e2eeKey, message)
    }

    /// message:send in an encrypted room: `ciphertext` (standard base64 of at most 8 KiB, made by the app) is
    /// stored and sent to members as message:text with `ciphertext` instead of `text`. Returns its event id.
    @discardableResult
    public func send(ciphertext: String, in roomID: String) async throws(ParlorError) -> Int64 {
        try await request(.messageSend, ["cid": .string(roomID), "ciphertext": .string(ciphertext)])["id"]?.integerValue ?? 0
    }
}
