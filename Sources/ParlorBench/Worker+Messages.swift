import ParlorCodec
import ParlorLoop

/// A client's bytes: the WebSocket handshake, frames, and the protocol messages the measurements are taken from.
extension Worker {
    func connected(_ client: BenchClient) {
        client.state = .handshaking
        let endpoint = settings.endpoints[client.node]
        client.writeUpgradeRequest(token: client.token, host: endpoint.host, port: endpoint.port, random: &random)
    }

    func reachedEnd(_ client: BenchClient) {
        if client.state == .closing {
            stats.closedCleanly += 1
            closeSocket(client)
            client.state = .closed
        } else {
            fail(client, "connection lost (\(client.state))")
        }
    }

    func received(_ client: BenchClient, _ bytes: UnsafeRawBufferPointer) {
        if client.state == .handshaking {
            switch client.readUpgradeResponse(bytes) {
            case .waiting: return
            case .failed(let reason): return fail(client, reason)
            case .upgraded: client.state = .awaitingSession
            }
        } else {
            client.decoder.append(bytes)
        }
        while let message = client.nextMessage(random: &random, pingsAnswered: &stats.pingsAnswered) {
            switch message {
            case .text(let text): handleText(client, text)
            case .binary: stats.error("binary message")
            case .failed(let reason): return fail(client, reason)
            case .close(let code, let reason):
                if client.state == .closing {
                    stats.closedCleanly += 1
                    closeSocket(client)
                    client.state = .closed
                } else {
                    fail(client, "server closed \(code.map(String.init) ?? "-") \(reason)")
                }
                return
            }
        }
    }

    private func handleText(_ client: BenchClient, _ text: String) {
        var text = text
        text.withUTF8 { bytes in
            guard let type = Scan.value(of: Scan.typeKey, in: bytes) else {
                stats.error("message without type")
                return
            }
            let now = Clock.now()
            if Scan.hasPrefix(bytes, type, Scan.memberPrefix) {
                stats.eventsTotal += 1
                let inWindow = shared.currentPhase == .churn
                if inWindow { stats.eventsInWindow += 1 }
                if inWindow, Scan.equal(bytes, type, Scan.memberJoined),
                   let name = Scan.value(of: Scan.nameKey, in: bytes, from: type.upperBound),
                   let joiner = Scan.trailingNumber(bytes, name), joiner != client.index, joiner < shared.clientCount {
                    let sentAt = shared.joinSentAt[joiner]
                    if sentAt > 0, now >= sentAt {
                        stats.fanOut.append(now - sentAt)
                        if shared.node(ofClient: joiner) == client.node {
                            stats.fanOutSameNode.append(now - sentAt)
                        } else {
                            stats.fanOutCrossNode.append(now - sentAt)
                        }
                    }
                }
                return
            }
            switch client.state {
            case .awaitingSession:
                guard Scan.equal(bytes, type, Scan.sessionSuccess) else {
                    fail(client, "unexpected first message")
                    return
                }
                client.state = .initialJoin
                client.opSentAt = now
                send(client, request: "conversation:join")
            case .initialJoin:
                if Scan.equal(bytes, type, Scan.joinSuccess) {
                    stats.initialJoinRTT.append(now - client.opSentAt)
                    client.state = .joined
                    shared.joinedCount.add(1, ordering: .relaxed)
                    rampSlotFreed()
                } else {
                    fail(client, "initial join: \(errorCode(bytes))")
                }
            case .leaving:
                if Scan.equal(bytes, type, Scan.leaveSuccess) {
                    client.state = .rejoining
                    client.opSentAt = now
                    shared.joinSentAt[client.index] = now
                    send(client, request: "conversation:join")
                } else {
                    stats.error("leave: \(errorCode(bytes))")
                    client.state = .joined
                    shared.outstandingOps.subtract(1, ordering: .relaxed)
                }
            case .rejoining:
                shared.outstandingOps.subtract(1, ordering: .relaxed)
                if Scan.equal(bytes, type, Scan.joinSuccess) {
                    stats.joinRTT.append(now - client.opSentAt)
                    stats.joinSentOffset.append(client.opSentAt - churnStart)
                    client.state = .joined
                } else {
                    stats.error("join: \(errorCode(bytes))")
                    shared.joinedCount.subtract(1, ordering: .relaxed)
                    client.state = .failed
                }
            case .closing:
                break
            default:
                stats.error("unexpected \(String(decoding: UnsafeBufferPointer(rebasing: bytes[type]), as: UTF8.self))")
            }
        }
    }

    private func errorCode(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        guard let code = Scan.value(of: Scan.codeKey, in: bytes) else { return "?" }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[code]), as: UTF8.self)
    }
}
