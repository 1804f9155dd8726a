import Foundation
import ParlorLoop
import ParlorMedia
import ParlorMediaClient
import ParlorProtocol

/// Brings members into the room: a token, a WebSocket, conversation:join (audio:enable for a speaker),
/// media:offer, then ICE/DTLS/SRTP with the media port; the WebSocket then goes to the keeper. With `janus`, the
/// same peers join a Janus VideoRoom instead (`JanusRoom`).
final class Members: @unchecked Sendable {  // immutable after init; each call uses its own HTTPSetup
    let port: Int
    /// Every node's port (the first is `port`), and the node index of listener i: `spread[i % spread.count]`.
    let ports: [Int]
    let spread: [Int]
    let janus: JanusRoom?
    let roomID: String
    let runTag: String
    let keeper: Keeper
    let slots: Int

    init(ports: [Int], spread: [Int], roomID: String, runTag: String, keeper: Keeper, slots: Int, janus: JanusRoom? = nil) {
        self.port = ports.first ?? 0
        self.ports = ports.isEmpty ? [0] : ports
        self.spread = spread
        self.janus = janus
        self.roomID = roomID
        self.runTag = runTag
        self.keeper = keeper
        self.slots = slots
    }

    /// The node (index into `ports`) member `index` joins: speakers the first, listeners by `spread`.
    func node(of index: Int, speaker: Bool) -> Int { speaker ? 0 : spread[index % spread.count] }

    /// One member; `adopt` runs on `loop` before the peer connects (to attach its receive path). Returns the
    /// connected peer.
    func join(index: Int, speaker: Bool, http: HTTPSetup, janusAPI: JanusAPI?, loop: EventLoop,
              adopt: @escaping @Sendable (MediaPeer) -> Void) throws -> MediaPeer {
        let peer = try MediaPeer(loop: loop)
        let answer: MediaAnswer
        var signalling: Signalling?
        // Janus leaves loopback out of its candidates: the peer binds the address Janus offers (the bench's namespace).
        var localHost = "127.0.0.1"
        if let janus, let janusAPI {
            answer = try janus.negotiate(peer, index: index, speaker: speaker, api: janusAPI)
            localHost = answer.address.host
        } else {
            let token = try http.token(name: "mbench-\(runTag)-\(speaker ? "s" : "l")\(index)")
            let parlor = try Signalling(port: ports[node(of: index, speaker: speaker)], token: token)
            try parlor.call(.conversationJoin, ["cid": roomID])
            if speaker { try parlor.call(.audioEnable, ["cid": roomID]) }
            let reply = try parlor.call(.mediaOffer, ["cid": roomID, "sdp": peer.offer(slots: slots, sends: speaker)])
            guard let sdp = reply["sdp"] as? String else { throw BenchError("\(RequestType.mediaOffer.rawValue): no sdp in the reply") }
            answer = try MediaAnswer(parsing: sdp)
            signalling = parlor
        }
        let bindHost = localHost
        let done = DispatchSemaphore(value: 0)
        let failure = Locked<String?>(nil)
        let started: Result<Void, any Error> = loop.submitAndWait {
            peer.connected = { done.signal() }
            peer.failed = { reason in
                failure.withLock { $0 = reason }
                done.signal()
            }
            adopt(peer)
            return Result { try peer.connect(to: answer, localHost: bindHost) }
        }
        try started.get()
        guard done.wait(timeout: .now() + 15) == .success else { throw BenchError("member \(index): no DTLS connection within 15 s") }
        if let reason = failure.withLock({ $0 }) { throw BenchError("member \(index): \(reason)") }
        if let signalling { keeper.adopt(signalling) }
        return peer
    }

    /// Members `range` in parallel on `threads` setup threads; the first error stops the rest.
    func joinAll(_ range: Range<Int>, threads: Int, speaker: Bool, loopFor: @escaping @Sendable (Int) -> EventLoop,
                 adopt: @escaping @Sendable (Int, MediaPeer) -> Void) throws -> MediaPeer? {
        let firstError = Locked<(any Error)?>(nil)
        let sample = Locked<MediaPeer?>(nil)
        let group = DispatchGroup()
        for thread in 0..<min(threads, range.count) {
            group.enter()
            Thread { [self] in
                defer { group.leave() }
                let https = ports.map { HTTPSetup(port: $0) }
                let janusAPI = janus.map { JanusAPI(port: $0.port, basePath: $0.basePath) }
                var index = range.lowerBound + thread
                while index < range.upperBound, firstError.withLock({ $0 == nil }) {
                    let member = index
                    do {
                        let http = https[node(of: member, speaker: speaker)]
                        let peer = try join(index: member, speaker: speaker, http: http, janusAPI: janusAPI, loop: loopFor(member)) { adopt(member, $0) }
                        sample.withLock { if $0 == nil { $0 = peer } }
                    } catch {
                        firstError.withLock { if $0 == nil { $0 = error } }
                    }
                    index += threads
                }
            }.start()
        }
        group.wait()
        if let error = firstError.withLock({ $0 }) { throw error }
        return sample.withLock { $0 }
    }
}
