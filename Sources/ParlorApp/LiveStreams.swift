import ParlorHTTP
import ParlorMedia
import ParlorMetrics
import ParlorRecording
import ParlorRooms
import Synchronization

/// The rooms' live streams on this node (issue 38): one `LiveMix` per room with listeners, fed by the room's media
/// tap, whose pages go to every listener's streamed response. The first listener starts the mix, the last one's
/// leaving stops it; every change of the count goes to the rooms domain, which tells the room (room:stream).
final class LiveStreams: Sendable {
    private struct Stream {
        /// Tells a stopped mix's last pages from a newer mix's of the same room.
        let generation: UInt64
        let mix: LiveMix
        /// Each listener's response, with the user whose token opened it (nil: none, the stream was public).
        var listeners: [HTTPStreamWriter: String?]

        var report: LiveListeners {
            var users = Set<String>(), anonymous = 0
            for user in listeners.values {
                if let user { users.insert(user) } else { anonymous += 1 }
            }
            return LiveListeners(count: listeners.count, users: users, anonymous: anonymous)
        }
    }

    private struct State {
        var streams: [String: Stream] = [:]
        var lastGeneration: UInt64 = 0
    }

    private let state = Mutex(State())
    private let media: MediaServer
    private let metrics: ServerMetrics
    /// The rooms service's `liveListenersChanged`, holding the service weakly.
    private let report: @Sendable (_ roomID: String, LiveListeners) -> Void

    init(media: MediaServer, metrics: ServerMetrics, rooms: RoomsService) {
        self.media = media
        self.metrics = metrics
        report = { [weak rooms] roomID, listeners in rooms?.liveListenersChanged(roomID: roomID, listeners: listeners) }
        rooms.onLiveStreamCuts { [weak self] roomID, cut in self?.end(cut, in: roomID) }
    }

    /// The rooms domain says these listeners may no longer hear the room: their responses end (each `ended` then
    /// removes it, and the last stops the mix).
    func end(_ cut: LiveStreamCut, in roomID: String) {
        let writers = state.withLock { state -> [HTTPStreamWriter] in
            let listeners = state.streams[roomID]?.listeners ?? [:]
            switch cut {
            case .everyone: return Array(listeners.keys)
            case .listeners(let users, let anonymous):
                return listeners.filter { _, user in user.map { users.contains($0) } ?? anonymous }.map(\.key)
            }
        }
        for writer in writers { writer.finish() }
    }

    /// A listener's response has started (on its loop): it gets the headers now and the mix's pages from the next on.
    /// `userID`: whose token opened it (nil: none, the stream is public).
    func add(_ writer: HTTPStreamWriter, to roomID: String, userID: String?) {
        let added = state.withLock { state -> Bool in
            if state.streams[roomID] == nil {
                state.lastGeneration += 1
                let generation = state.lastGeneration
                guard let mix = try? LiveMix(roomID: roomID, onPages: { [weak self] pages in self?.deliver(pages, roomID, generation) })
                else { return false }
                state.streams[roomID] = Stream(generation: generation, mix: mix, listeners: [:])
                media.setTap(group: roomID, purpose: .liveStream, LiveMixTap(mix))
                metrics.liveMixes.add()
            }
            state.streams[roomID]!.listeners[writer] = .some(userID)
            // Under the lock, so the headers are queued to the writer's loop before any page delivered after them.
            writer.send(state.streams[roomID]!.mix.headerPages)
            metrics.liveListeners.add()
            // Under the lock too: the rooms thread hears the counts in the order they happened.
            report(roomID, state.streams[roomID]!.report)
            return true
        }
        if !added { writer.finish() }
    }

    /// A listener's response ended (on its loop), whatever ended it.
    func remove(_ writer: HTTPStreamWriter, from roomID: String) {
        state.withLock { state in
            guard var stream = state.streams[roomID], stream.listeners.removeValue(forKey: writer) != nil else { return }
            metrics.liveListeners.subtract()
            if stream.listeners.isEmpty {
                state.streams[roomID] = nil
                media.setTap(group: roomID, purpose: .liveStream, nil)
                stream.mix.stop()
                metrics.liveMixes.subtract()
            } else {
                state.streams[roomID] = stream
            }
            report(roomID, stream.report)
        }
    }

    /// On the mix's thread: the same pages to every listener, one task per event loop.
    private func deliver(_ pages: [UInt8], _ roomID: String, _ generation: UInt64) {
        state.withLock { state in
            guard let stream = state.streams[roomID], stream.generation == generation else { return }
            HTTPStreamWriter.send(pages, to: stream.listeners.keys)
        }
    }
}

/// The media workers' live-stream tap of one room, handing each packet to its mix's queue (which never blocks).
private final class LiveMixTap: MediaPacketTap {
    let mix: LiveMix

    init(_ mix: LiveMix) { self.mix = mix }

    func received(rtp: [UInt8], member: String, arrival: UInt64) {
        mix.append(rtp: rtp, member: member, arrival: arrival)
    }
}
