import Glibc

/// Why a recording's file could not be written.
public enum RecordingFileError: Error, Sendable, Equatable {
    /// ENOSPC, or EFBIG (a file size limit): the disk or the quota is full.
    case full(path: String)
    case failed(path: String, errno: Int32)
}

/// One file of a recording, appended to with `write(2)`: each append is whole Ogg pages, so whatever stops the
/// process, the file holds whole pages and perhaps part of one more. A failed append truncates the file back to
/// where the append began (whole pages), so a full disk leaves every file playable to its last page. Owned by the
/// recorder's thread (and `parlor join --record`'s files, ParlorMediaClient's `AudioOutputFile`).
public final class RecordingFile {
    public let path: String
    private var descriptor: Int32
    public private(set) var length: Int64 = 0

    public init(path: String) throws(RecordingFileError) {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw Self.error(errno, path: path) }
    }

    deinit { close() }

    public func append(_ bytes: [UInt8]) throws(RecordingFileError) {
        guard !bytes.isEmpty else { return }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { raw in write(descriptor, raw.baseAddress! + written, raw.count - written) }
            if result < 0 {
                let code = errno
                if code == EINTR { continue }
                _ = ftruncate(descriptor, off_t(length))
                throw Self.error(code, path: path)
            }
            written += result
        }
        length += Int64(bytes.count)
    }

    public func close() {
        guard descriptor >= 0 else { return }
        _ = Glibc.close(descriptor)
        descriptor = -1
    }

    static func error(_ code: Int32, path: String) -> RecordingFileError {
        code == ENOSPC || code == EFBIG || code == EDQUOT ? .full(path: path) : .failed(path: path, errno: code)
    }

    /// Writes `bytes` to `path` whole or not at all: a temporary file renamed over it.
    static func replace(_ path: String, with bytes: [UInt8]) throws(RecordingFileError) {
        let temporary = path + ".new"
        let file = try RecordingFile(path: temporary)
        do throws(RecordingFileError) {
            try file.append(bytes)
        } catch {
            file.close()
            unlink(temporary)
            throw error
        }
        file.close()
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw error(code, path: path)
        }
    }
}
