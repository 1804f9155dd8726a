#if canImport(Glibc)
import Glibc
#endif

/// A file `HeardAudioRecorder` appends whole Ogg pages to with write(2). A failed append is cut back to where it
/// began, so the file holds whole pages whatever happens; after a failure nothing more is written.
final class AudioOutputFile {
    let path: String
    private var descriptor: Int32
    private var length: Int = 0
    private(set) var failure: String?

    /// Creates (or empties) `path`. Throws a sentence naming the path and the reason.
    init(path: String) throws(MediaClientError) {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw MediaClientError("cannot write \(path): \(String(cString: strerror(errno)))") }
    }

    deinit { close() }

    /// Appends `bytes`; false (and `failure` set) when the disk refused them.
    @discardableResult
    func append(_ bytes: [UInt8]) -> Bool {
        guard failure == nil, descriptor >= 0 else { return false }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { raw in write(descriptor, raw.baseAddress! + written, raw.count - written) }
            if result < 0 {
                let code = errno
                if code == EINTR { continue }
                _ = ftruncate(descriptor, off_t(length))
                failure = "cannot write \(path): \(String(cString: strerror(code)))"
                return false
            }
            written += result
        }
        length += bytes.count
        return true
    }

    func close() {
        guard descriptor >= 0 else { return }
        _ = Glibc.close(descriptor)
        descriptor = -1
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
