import ParlorCodec
import ParlorLoop

/// A response whose body is produced later, from any thread, for as long as the producer has something to say (the
/// live stream of issue 38). The head goes out at once; the body follows chunk by chunk, with
/// `Transfer-Encoding: chunked` for HTTP/1.1 and close-delimited for HTTP/1.0. The connection carries nothing after
/// it: it closes when the producer finishes, the client goes away, or the client reads too slowly (its unsent bytes
/// pass `HTTPServerConfiguration.maxStreamBacklogBytes`).
public struct HTTPStreamResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    /// On the connection's loop, right after the head is written (never for HEAD): the producer keeps `writer` and
    /// sends to it from any thread.
    public let started: @Sendable (HTTPStreamWriter) -> Void
    /// On the connection's loop, once, when a started stream ends, whatever ended it: the producer drops `writer`.
    public let ended: @Sendable (HTTPStreamWriter, HTTPStreamEnd) -> Void
    /// The body's length when it is known up front (a file): sent as `Content-Length`, the body unframed (no chunks);
    /// the producer sends exactly that many bytes, then `finish`. nil: chunked (close-delimited for HTTP/1.0).
    public var contentLength: Int?
    /// Pull mode, for a producer that reads what it sends (a file, another server): on the connection's loop once
    /// after the head, then once after each `send` as soon as the client has taken all but
    /// `HTTPStreamResponse.drainedBelowBytes` of what is queued. Sending one piece per call keeps a download's memory
    /// bounded whatever its length, and a client that stops reading stops the producer instead of growing a backlog.
    public var drained: (@Sendable (HTTPStreamWriter) -> Void)?

    /// Pull mode: a client that takes none of what is queued for this long is cut off (`.slowReader`), so a download
    /// nobody reads does not hold its connection and file for ever. A slow producer is not the client's fault: with
    /// nothing queued the connection waits. nil: no limit.
    public var idleLimit: TimeSpan?

    /// The unsent bytes below which `drained` asks for the next piece.
    public static let drainedBelowBytes = 64 * 1024

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), started: @escaping @Sendable (HTTPStreamWriter) -> Void,
                ended: @escaping @Sendable (HTTPStreamWriter, HTTPStreamEnd) -> Void) {
        self.status = status
        self.headers = headers
        self.started = started
        self.ended = ended
    }
}

/// Why a stream ended.
public enum HTTPStreamEnd: Sendable, Equatable {
    /// The producer called `finish`.
    case finished
    /// The client closed the connection, or it failed.
    case clientClosed
    /// The client did not read: its backlog passed the bound and it was cut off (counted).
    case slowReader
    /// The server is stopping.
    case shutdown
}

/// The producer's end of one streamed response: Sendable, Hashable (keep them in a set), and safe to use after the
/// connection has gone (sends are then dropped).
public struct HTTPStreamWriter: Sendable, Hashable {
    let handle: ConnectionHandle

    public var loop: EventLoop { handle.loop }

    /// Queues `bytes` as the next part of the body.
    public func send(_ bytes: [UInt8]) { Self.send(bytes, to: CollectionOfOne(self)) }

    /// Queues the same `bytes` to every writer: one task per event loop, however many writers it holds; the array is
    /// shared, never copied per writer.
    public static func send(_ bytes: [UInt8], to writers: some Collection<HTTPStreamWriter>) {
        guard !bytes.isEmpty else { return }
        var byLoop: [(loop: EventLoop, handles: [ConnectionHandle])] = []
        for writer in writers {
            if let index = byLoop.firstIndex(where: { $0.loop === writer.handle.loop }) {
                byLoop[index].handles.append(writer.handle)
            } else {
                byLoop.append((writer.handle.loop, [writer.handle]))
            }
        }
        for (loop, handles) in byLoop {
            loop.execute {
                for handle in handles { (handle.resolve()?.handler as? HTTPStreamConnection)?.send(bytes) }
            }
        }
    }

    /// Ends the body (the last chunk) and closes the connection once it is out.
    public func finish() {
        handle.withConnection { ($0.handler as? HTTPStreamConnection)?.finish() }
    }

    /// Gives up: closes the connection once what was sent is out, without the last chunk, so a client sees a body
    /// cut short (and with `contentLength`, fewer bytes than announced), never a complete one.
    public func abort() {
        handle.withConnection { ($0.handler as? HTTPStreamConnection)?.abort() }
    }
}
