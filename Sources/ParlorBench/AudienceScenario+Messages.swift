import ParlorCodec
import ParlorLoop

/// The audience scenario's bytes: handshake, frames, and what each message tells the measurements.
extension AudienceScenario {
    func received(_ client: AudienceClient, _ bytes: UnsafeRawBufferPointer) {
        if client.state == .joined {
            client.bytesAfterJoin += bytes.count
            if phase == .fill { client.bytesInFill += bytes.count }
            if inSteadyWindow(client) { client.steadyBytes += bytes.count }
        }
        if client.state == .handshaking {
            switch client.readUpgradeResponse(bytes) {
            case .waiting: return
            case .failed(let reason): return fail(client, reason)
            case .upgraded: client.state = .awaitingSession
            }
        } else {
            client.decoder.append(bytes)
        }
        while let message = client.nextMessage(random: &random, pingsAnswered: &pingsAnswered) {
            switch message {
            case .text(let text): handle(client, text)
            case .binary: error("binary message")
            case .failed(let reason): return fail(client, reason)
            case .close(let code, let reason):
                if client.state == .closing {
                    closedCleanly += 1
                    closeSocket(client)
                    client.state = .closed
                } else {
                    fail(client, "server closed \(code.map(String.init) ?? "-") \(reason)")
                }
                return
            }
        }
    }

    /// Whether what `client` receives now counts toward the steady window's rate.
    private func inSteadyWindow(_ client: AudienceClient, now: Int64 = Clock.now()) -> Bool {
        client.summarySince > 0 && client.summarySince <= steadyWindow.lowerBound && steadyWindow.contains(now)
    }

    private func handle(_ client: AudienceClient, _ text: String) {
        var text = text
        text.withUTF8 { bytes in
            guard let type = Scan.value(of: Scan.typeKey, in: bytes) else {
                error("message without type")
                return
            }
            let now = Clock.now()
            if Scan.contains(bytes, type, Scan.errorInfix) {
                error(String(decoding: UnsafeBufferPointer(rebasing: bytes[type]), as: UTF8.self))
                if client.state == .joining { fail(client, "join refused") }
                return
            }
            switch client.state {
            case .awaitingSession:
                guard Scan.equal(bytes, type, Scan.sessionSuccess) else {
                    fail(client, "unexpected first message")
                    return
                }
                client.state = .joining
                client.joinSentAt = now
                send(client, "conversation:join")
            case .joining:
                if Scan.equal(bytes, type, Scan.joinSuccess) {
                    let memberID = Scan.value(of: Scan.memberIDKey, in: bytes).map { Array(UnsafeBufferPointer(rebasing: bytes[$0])) }
                    joined(client, memberID: memberID, now: now)
                    if Scan.value(of: Scan.presenceKey, in: bytes).map({ Scan.equal(bytes, $0, Scan.summary) }) == true {
                        client.summarySince = now
                    }
                }  // anything before the reply (it cannot be an event of the room yet) is ignored
            case .joined:
                event(client, bytes, type: type, now: now)
            default:
                break
            }
        }
    }

    /// An event (or a reply) to a member in the room.
    private func event(_ client: AudienceClient, _ bytes: UnsafeBufferPointer<UInt8>, type: Range<Int>, now: Int64) {
        let presence = Scan.hasPrefix(bytes, type, Scan.roomPrefix) || Scan.equal(bytes, type, Scan.memberJoined)
            || Scan.equal(bytes, type, Scan.memberLeft)
        if presence {
            client.presenceBytesAfterJoin += bytes.count
            if phase == .fill { client.presenceBytesInFill += bytes.count }
            if inSteadyWindow(client, now: now) { client.steadyPresenceBytes += bytes.count }
            if Scan.equal(bytes, type, Scan.roomPresence), let mode = Scan.value(of: Scan.modeKey, in: bytes) {
                client.summarySince = Scan.equal(bytes, mode, Scan.summary) ? now : 0
            }
        }
        if client.role == .moderator, Scan.equal(bytes, type, Scan.memberJoined),
           let name = Scan.value(of: Scan.nameKey, in: bytes, from: type.upperBound),
           let joiner = Scan.trailingNumber(bytes, name), joiner > 0, joiner < clients.count {
            let sentAt = clients[joiner].joinSentAt
            if sentAt > 0, now >= sentAt { moderatorJoinLatency.append(now - sentAt) }
            return
        }
        if Scan.equal(bytes, type, Scan.memberRole), let member = Scan.value(of: Scan.memberIDKey, in: bytes) {
            if let target = targetMemberID, Scan.equal(bytes, member, target), !roleChanges.isEmpty {
                roleChanges[roleChanges.count - 1].received += 1
                roleChanges[roleChanges.count - 1].latencies.append(now - roleChanges[roleChanges.count - 1].sentAt)
            } else if client.role == .speaker, let speaker = speakerMemberID, Scan.equal(bytes, member, speaker) {
                speakerPromoted()
            }
            return
        }
        if Scan.equal(bytes, type, Scan.speakingOn) || Scan.equal(bytes, type, Scan.speakingOff), !speakingChanges.isEmpty {
            speakingChanges[speakingChanges.count - 1].received += 1
            speakingChanges[speakingChanges.count - 1].latencies.append(now - speakingChanges[speakingChanges.count - 1].sentAt)
        }
    }
}
