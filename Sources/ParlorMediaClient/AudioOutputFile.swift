#if canImport(Glibc)
import Glibc
#endif
import ParlorRecording

/// A file `HeardAudioRecorder` appends whole Ogg pages to: ParlorRecording's `RecordingFile` (a failed append is cut
/// back to where it began, so the file holds whole pages whatever happens), remembering the first failure as a
/// sentence; after it nothing more is written.
final class AudioOutputFile {
    let path: String
    private let file: RecordingFile
    private(set) var failure: String?

    /// Creates (or empties) `path`. Throws a sentence naming the path and the reason.
    init(path: String) throws(MediaClientError) {
        self.path = path
        do {
            file = try RecordingFile(path: path)
        } catch {
            throw MediaClientError(Self.sentence(error))
        }
    }

    /// Appends `bytes`; false (and `failure` set) when the disk refused them.
    @discardableResult
    func append(_ bytes: [UInt8]) -> Bool {
        guard failure == nil else { return false }
        do {
            try file.append(bytes)
            return true
        } catch {
            failure = Self.sentence(error)
            return false
        }
    }

    func close() { file.close() }

    private static func sentence(_ error: RecordingFileError) -> String {
        switch error {
        case .full(let path): "cannot write \(path): the disk (or the file size limit) is full"
        case .failed(let path, let code): "cannot write \(path): \(String(cString: strerror(code)))"
        }
    }
}

/// The whole of `path`, at most `limit` bytes. Throws a sentence: missing, unreadable, a directory, too large.
func readWholeFile(_ path: String, limit: Int) throws(MediaClientError) -> [UInt8] {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw MediaClientError("cannot read \(path): \(String(cString: strerror(errno)))") }
    defer { _ = close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { throw MediaClientError("cannot read \(path): \(String(cString: strerror(errno)))") }
    guard status.st_mode & S_IFMT == S_IFREG else { throw MediaClientError("cannot read \(path): not a regular file") }
    guard status.st_size <= limit else { throw MediaClientError("\(path) is larger than \(limit >> 20) MiB") }
    var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
    var offset = 0
    while offset < bytes.count {
        let count = bytes.withUnsafeMutableBytes { raw in read(descriptor, raw.baseAddress! + offset, raw.count - offset) }
        if count < 0, errno == EINTR { continue }
        guard count >= 0 else { throw MediaClientError("cannot read \(path): \(String(cString: strerror(errno)))") }
        if count == 0 { break }
        offset += count
    }
    return Array(bytes[0..<offset])
}
