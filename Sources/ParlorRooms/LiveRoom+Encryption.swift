import ParlorCodec
import ParlorProtocol

/// End-to-end encrypted rooms (issue 40; docs/e2ee.md): the room's rules about what its server cannot read. The room
/// is encrypted from its creation for its whole life. Its clients state that they encrypt, chat carries ciphertext,
/// and key messages pass through unread, unstored and unlogged; what needs the audio (recording) is refused.
extension LiveRoom {
    /// An encrypted room takes conversation:join and media:offer only with `"e2ee": true`: the client's statement
    /// that it encrypts, so a client that cannot does not sit in the room hearing noise. It proves nothing.
    func requireEncryptionStatement(_ stated: Bool, for request: RequestType) throws {
        guard e2ee, !stated else { return }
        throw RoomError(.roomEncryptionRequired,
                        "room \(id) is end-to-end encrypted: \(request.rawValue) must carry \"e2ee\": true from a client that encrypts")
    }

    /// Chat fits the room: ciphertext in an encrypted room, text in any other.
    func checkChatContent(_ content: ChatContent) throws {
        switch content {
        case .text where e2ee:
            throw RoomError(.roomEncryptionRequired, "room \(id) is end-to-end encrypted: send ciphertext, not text")
        case .ciphertext where !e2ee:
            throw RoomError(.messageInvalidCiphertext, "room \(id) is not end-to-end encrypted: send text, not ciphertext")
        default: break
        }
    }

    /// The server cannot record (or stream) a room whose audio it cannot decrypt.
    func refuseIfEncrypted(_ action: String) throws {
        guard e2ee else { return }
        throw RoomError(.roomEncrypted, "room \(id) is end-to-end encrypted: the server cannot \(action) it")
    }

    /// e2ee:key: a joined member's key message, relayed as it came, with `from` the sender's member id, to the other
    /// joined members it is for: those its `keys` name in `to` (wrapped keys only they can open), or everyone when it
    /// names none (an announcement of a public key). So a join costs the room messages in proportion to its size, not
    /// to its square: each member's reply to a newcomer goes to the newcomer alone. Never stored as an event, never
    /// replayed, never logged. A member whose connection is on another node (PostgreSQL) gets it through the
    /// cluster's signal queue, as rtc:* signalling does: a row that node deletes when it takes it.
    func relayKey(_ body: JSONObject, for caller: Caller, _ step: inout Step) throws {
        guard let sender = member(forUser: caller.user.id), connections(of: caller.user.id).contains(caller.client.id) else {
            throw RoomError.notJoined(id)
        }
        guard e2ee else {
            throw RoomError(.requestInvalidField, "room \(id) is not end-to-end encrypted: it relays no e2ee:key")
        }
        let message = ProtocolMessage.message(["type": .string(EventType.e2eeKey.rawValue), "cid": .string(id),
                                               "from": .string(sender.id), "body": .object(body)])
        step.batch.reply(to: caller, .e2eeKey, body: .object([:]))
        let cluster = step.store as? any ClusterTransaction
        let addressed = Self.keyRecipients(body)
        for member in members.values where member.id != sender.id && addressed.map({ $0.contains(member.id) }) ?? true {
            let receivers = connections(of: member.user.id)
            for clientID in receivers { step.batch.outbox.send(message, to: clientID) }
            if receivers.isEmpty, let cluster {
                _ = try cluster.relaySignal(roomID: id, toMember: member.id, message: message, at: step.rules.clock.now())
            }
        }
    }
}

extension LiveRoom {
    /// The member ids a key message's `keys` entries name in `to` (the envelope, not the secrets), or nil when it names
    /// none: then it is for every member.
    static func keyRecipients(_ body: JSONObject) -> Set<String>? {
        guard case .array(let keys)? = body["keys"] else { return nil }
        let named = Set(keys.compactMap { $0["to"]?.stringValue })
        return named.isEmpty ? nil : named
    }
}

/// End-to-end encrypted rooms (issue 40): the bounds of what the server carries without reading it.
extension TextRules {
    /// The largest e2ee:key body the server relays, as JSON (docs/e2ee.md: the web client's MAX_KEY_MESSAGE_BYTES).
    public static let maxKeyBodyBytes = 16 * 1024
    /// The longest chat ciphertext, in base64 characters (the web client keeps its messages within it).
    public static let maxCiphertextCharacters = 8 * 1024

    /// An encrypted room's chat: standard base64 with padding, not empty, at most `maxCiphertextCharacters`. Only
    /// its form is checked; what it says the server cannot know.
    public static func checkCiphertext(_ value: String) -> Result<String, TextRuleViolation> {
        let rule = TextRuleViolation(rule: "must be standard base64 (with padding) of 1 to \(maxCiphertextCharacters) characters")
        guard value.utf8.count <= maxCiphertextCharacters, let bytes = Base64.decode(value), !bytes.isEmpty else { return .failure(rule) }
        return .success(value)
    }
}
