import Foundation
import Glibc

/// Closes an Ogg Opus file a recording left unfinished (the process killed, or a write failed): cut after its last
/// whole page, that page flagged end of stream, so every player reads it cleanly to there. Reads only the file's
/// first page and its last 128 KB (a page is at most 65,307 bytes), whatever the file's length.
enum RecordingFileRepair {
    static let tailSize = 2 * (OggPage.headerSize + 255 + OggPage.maximumBodySize)

    /// The file's length in ms once closed (its last whole page's granule position less the pre-skip); nil when it
    /// is missing or holds no Opus header.
    static func close(_ path: String) -> Int64? {
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { _ = Glibc.close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        let size = Int(status.st_size)
        guard let head = read(descriptor, at: 0, count: min(size, 4_096)),
              let first = try? OggPage(parsing: head, at: 0), first.flags.contains(.beginningOfStream),
              let opusHead = try? OpusHead(parsing: first.body) else { return nil }
        let tailStart = max(0, size - tailSize)
        guard let tail = read(descriptor, at: tailStart, count: size - tailStart),
              let (offset, page) = lastWholePage(in: tail, serialNumber: first.serialNumber) else { return 0 }
        let end = tailStart + offset + page.size
        // Only an audio page (after OpusHead and OpusTags) whose last packet ends on it may end the stream.
        let audio = page.sequenceNumber >= 2 && page.granulePosition >= 0 && (page.lacingValues.last ?? 255) < 255
        if audio, !page.flags.contains(.endOfStream) {
            var closed = page
            closed.flags.insert(.endOfStream)
            let bytes = closed.serialized()
            guard bytes.withUnsafeBytes({ pwrite(descriptor, $0.baseAddress, $0.count, off_t(tailStart + offset)) }) == bytes.count else { return nil }
        }
        if end < size { _ = ftruncate(descriptor, off_t(end)) }
        guard audio else { return 0 }
        return max(0, page.granulePosition - Int64(opusHead.preSkip)) * 1_000 / Int64(Opus.sampleRate)
    }

    /// The last page in `bytes` that parses whole with its checksum: searched from the end for "OggS".
    private static func lastWholePage(in bytes: [UInt8], serialNumber: UInt32) -> (Int, OggPage)? {
        var offset = bytes.count - 4
        while offset >= 0 {
            if bytes[offset] == 0x4F, bytes[offset + 1] == 0x67, bytes[offset + 2] == 0x67, bytes[offset + 3] == 0x53,
               let page = try? OggPage(parsing: bytes, at: offset), page.serialNumber == serialNumber {
                return (offset, page)
            }
            offset -= 1
        }
        return nil
    }

    private static func read(_ descriptor: Int32, at offset: Int, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let result = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset + done)) }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { return nil }
            done += result
        }
        return bytes
    }
}

extension RoomRecorder {
    /// At a restart: every recording directory under `root` whose manifest still says "recording" gets state
    /// "interrupted" and its durations as far as its files play (each file closed after its last whole page);
    /// returns those manifests, and with `includingFinished` also those a stopping server already marked interrupted
    /// (one pass over the directories either way).
    public static func closeInterrupted(under root: String, includingFinished: Bool = false) -> [RecordingManifest] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: root) else { return [] }
        var closed: [RecordingManifest] = []
        for name in names.sorted() {
            let directory = root + "/" + name
            let manifestPath = directory + "/" + RecordingManifest.fileName
            guard let data = FileManager.default.contents(atPath: manifestPath),
                  var manifest = try? RecordingManifest(decoding: Array(data)) else { continue }
            if includingFinished, manifest.state == "interrupted" {
                closed.append(manifest)
                continue
            }
            guard manifest.state == "recording" else { continue }
            unlink(manifestPath + ".new")  // a manifest being replaced when the process died
            // Only the recorder's own names: a manifest naming another file is not followed out of its directory.
            let ownName = { (file: String) in file == RecordingManifest.mixFile || (file.hasPrefix("track-") && !file.contains("/")) }
            for index in manifest.tracks.indices where ownName(manifest.tracks[index].file) {
                manifest.tracks[index].durationMs = RecordingFileRepair.close(directory + "/" + manifest.tracks[index].file) ?? 0
            }
            let mixDuration = ownName(manifest.mix) ? RecordingFileRepair.close(directory + "/" + manifest.mix) : nil
            manifest.durationMs = mixDuration ?? manifest.tracks.map(\.durationMs).max() ?? 0
            manifest.state = "interrupted"
            manifest.stopReason = .interrupted
            try? RecordingFile.replace(manifestPath, with: manifest.encoded())
            closed.append(manifest)
        }
        return closed
    }
}
