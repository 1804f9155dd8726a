import ParlorCodec
import ParlorLoop

/// A client's bytes: the WebSocket handshake, frames, and the protocol messages the measurements are taken from.
extension Worker {
    func connected(_ client: BenchClient) {
        client.state = .handshaking
        var key: [UInt8] = []
        for _ in 0..<16 { key.append(UInt8(truncatingIfNeeded: random.next())) }
        let endpoint = settings.endpoints[client.node]
        let request = "GET /ws?token=\(client.token) HTTP/1.1\r\nHost: \(endpoint.host):\(endpoint.port)\r\n"
            + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(Base64.encode(key))\r\n"
            + "Sec-WebSocket-Version: 13\r\n\r\n"
        client.connection?.write(Array(request.utf8))
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
            client.head.append(contentsOf: bytes)
            guard let end = HTTPBytes.headEnd(client.head) else {
                if client.head.count > 16384 { fail(client, "handshake: head too large") }
                return
            }
            let headText = String(decoding: client.head[0..<end], as: UTF8.self)
            guard HTTPBytes.status(headText) == 101 else {
                fail(client, "handshake: status \(HTTPBytes.status(headText).map(String.init) ?? "?")")
                return
            }
            let rest = Array(client.head[(end + 4)...])
            client.head = []
            client.state = .awaitingSession
            if !rest.isEmpty {
                client.decoder.append(rest)
                drainMessages(client)
            }
            return
        }
        client.decoder.append(bytes)
        drainMessages(client)
    }

    private func drainMessages(_ client: BenchClient) {
        while client.connection != nil {
            let message: WebSocketMessage?
            do {
                message = try client.decoder.next()
            } catch {
                fail(client, "websocket: \(error.reason)")
                return
            }
            guard let message else { return }
            switch message {
            case .text(let text): handleText(client, text)
            case .binary: stats.error("binary message")
            case .ping(let payload):
                stats.pingsAnswered += 1
                client.connection?.write(WebSocketFrameEncoder.frame(.pong, payload: payload, mask: random.mask()))
            case .pong: break
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
