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
        var listeners: Set<HTTPStreamWriter>
    }

    private struct State {
        var streams: [String: Stream] = [:]
        var lastGeneration: UInt64 = 0
    }

    private let state = Mutex(State())
    private let media: MediaServer
    private let metrics: ServerMetrics
    /// The rooms service's `liveListenersChanged`, holding the service weakly.
    private let report: @Sendable (_ roomID: String, _ count: Int) -> Void

    init(media: MediaServer, metrics: ServerMetrics, rooms: RoomsService) {
        self.media = media
        self.metrics = metrics
        report = { [weak rooms] roomID, count in rooms?.liveListenersChanged(roomID: roomID, count: count) }
        rooms.onRoomsClosed { [weak self] roomID in self?.endAll(in: roomID) }
    }

    /// The room closed: every listener's response ends (each `ended` then removes it, and the last stops the mix).
    func endAll(in roomID: String) {
        let writers = state.withLock { $0.streams[roomID]?.listeners ?? [] }
        for writer in writers { writer.finish() }
    }

    /// A listener's response has started (on its loop): it gets the headers now and the mix's pages from the next on.
    func add(_ writer: HTTPStreamWriter, to roomID: String) {
        let added = state.withLock { state -> Bool in
            if state.streams[roomID] == nil {
                state.lastGeneration += 1
                let generation = state.lastGeneration
                guard let mix = try? LiveMix(roomID: roomID, onPages: { [weak self] pages in self?.deliver(pages, roomID, generation) })
                else { return false }
                state.streams[roomID] = Stream(generation: generation, mix: mix, listeners: [])
                media.setTap(group: roomID, purpose: .liveStream, LiveMixTap(mix))
                metrics.liveMixes.add()
            }
            state.streams[roomID]!.listeners.insert(writer)
            // Under the lock, so the headers are queued to the writer's loop before any page delivered after them.
            writer.send(state.streams[roomID]!.mix.headerPages)
            metrics.liveListeners.add()
            // Under the lock too: the rooms thread hears the counts in the order they happened.
            report(roomID, state.streams[roomID]!.listeners.count)
            return true
        }
        if !added { writer.finish() }
    }

    /// A listener's response ended (on its loop), whatever ended it.
    func remove(_ writer: HTTPStreamWriter, from roomID: String) {
        state.withLock { state in
            guard var stream = state.streams[roomID], stream.listeners.remove(writer) != nil else { return }
            metrics.liveListeners.subtract()
            if stream.listeners.isEmpty {
                state.streams[roomID] = nil
                media.setTap(group: roomID, purpose: .liveStream, nil)
                stream.mix.stop()
                metrics.liveMixes.subtract()
            } else {
                state.streams[roomID] = stream
            }
            report(roomID, stream.listeners.count)
        }
    }

    /// On the mix's thread: the same pages to every listener, one task per event loop.
    private func deliver(_ pages: [UInt8], _ roomID: String, _ generation: UInt64) {
        state.withLock { state in
            guard let stream = state.streams[roomID], stream.generation == generation else { return }
            HTTPStreamWriter.send(pages, to: stream.listeners)
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
