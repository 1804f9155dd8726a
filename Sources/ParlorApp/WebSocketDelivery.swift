import ParlorHTTP
import ParlorLoop
import ParlorRooms

/// Where the rooms thread's Outbox ends: each loop writes what a committed batch gave its WebSocket connections.
struct WebSocketDelivery: DeliveryChannel {
    func deliver(_ deliveries: [(ConnectionHandle, Delivery)], on loop: EventLoop) {
        loop.execute {
            // Frames are queued, then each connection writes once: one writev for all this batch gave it. A flag on the
            // connection, not a set, marks the ones already listed (no hashing per recipient).
            var touched: [WebSocketConnection] = []
            touched.reserveCapacity(deliveries.count)
            for (handle, delivery) in deliveries {
                guard let connection = handle.resolve() else { continue }
                if case .drop = delivery {
                    connection.close()
                    continue
                }
                guard let socket = connection.handler as? WebSocketConnection else { continue }
                if !socket.awaitsBatchWrite {
                    socket.awaitsBatchWrite = true
                    touched.append(socket)
                }
                switch delivery {
                case .frame(let frame): socket.send(frame: frame, writeNow: false)
                case .pacedFrame(let frame): socket.sendPaced(frame: frame)
                case .reply(let frame): socket.sendReply(frame: frame, writeNow: false)
                case .replayPageEnd(let more, let stallTimeout): socket.replayPageEnded(more: more, stallTimeout: stallTimeout)
                case .close(let code, let reason):
                    // A session taken over: what this connection had not read is the new one's to replay.
                    if code == ParlorCloseCode.sessionTakenOver { socket.connection.discardUnsentOutput() }
                    socket.writeQueued()
                    socket.close(code: code, reason: reason)
                case .drop: break
                }
            }
            for socket in touched {
                socket.awaitsBatchWrite = false
                socket.writeQueued()
            }
        }
    }
}
