#if canImport(Glibc)
import Glibc
#endif
import ParlorCodec
import ParlorHTTP
import ParlorLoop
import ParlorStore

/// Where a download's bytes come from, read on a download thread one piece at a time: a file on this node's disk, or
/// the node that holds it (`RecordingProxy`). A source closes what it holds when it is released.
protocol DownloadSource: AnyObject, Sendable {
    /// The next bytes, at most `limit`; empty when there are no more.
    func read(upTo limit: Int) throws -> [UInt8]
}

/// A streamed download (`HTTPStreamResponse` in pull mode): one 64 KiB read off the loop, sent, and the next read only
/// once the client has taken it, so a download holds about two pieces in memory whatever the file's size, and a
/// client that stops reading stops the reads.
enum RecordingDownload {
    /// Shared by every server in the process (tests run many): file reads and proxied reads, which block; it lives as
    /// long as the process.
    static let pool = BlockingWorkPool(name: "parlor-download", threadCount: 4)
    static let pieceBytes = 64 * 1024
    /// A client that takes nothing for this long is cut off (the file, or the other node's connection, let go).
    static let idleLimit = TimeSpan.seconds(60)

    /// Streams exactly `length` bytes of `source` (a source that ends early closes the connection short of it, which
    /// a client sees as a truncated download, never as a complete one).
    static func response(status: Int, headers: HTTPHeaders, length: Int, source: any DownloadSource) -> HTTPStreamResponse {
        let remaining = Locked(length)
        var response = HTTPStreamResponse(status: status, headers: headers, started: { _ in }, ended: { _, _ in })
        response.contentLength = length
        response.idleLimit = idleLimit
        response.drained = { writer in
            pool.submit {
                let want = remaining.withLock { $0 }
                guard want > 0 else {
                    writer.finish()
                    return
                }
                let bytes = (try? source.read(upTo: min(want, pieceBytes))) ?? []
                guard !bytes.isEmpty else {
                    writer.abort()
                    return
                }
                remaining.withLock { $0 -= bytes.count }
                writer.send(bytes)
            }
        }
        return response
    }
}

/// A byte range of a file on this node's disk, opened at the first read.
final class RecordingFileSource: DownloadSource, @unchecked Sendable {  // `fd` and `offset` are only touched holding `lock`
    private let path: String
    private let lock = Locked(())
    private var fd: Int32 = -1
    private var offset: Int

    init(path: String, offset: Int) {
        self.path = path
        self.offset = offset
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// The file's size now, nil when it is not there (or not a regular file).
    static func size(of path: String) -> Int? {
        var status = stat()
        guard stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(status.st_size)
    }

    func read(upTo limit: Int) throws -> [UInt8] {
        try lock.withLock { _ in
            if fd < 0 {
                fd = open(path, O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else { throw SystemError("open \(path)", errno: errno) }
            }
            var bytes = [UInt8](repeating: 0, count: limit)
            let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, limit, off_t(offset)) }
            guard count >= 0 else { throw SystemError("read \(path)", errno: errno) }
            offset += count
            bytes.removeLast(limit - count)
            return bytes
        }
    }
}

/// `Range: bytes=…` (RFC 9110 §14.2) against a file of `size` bytes: one range, a-b, a- or -n. Anything else (several
/// ranges, other units, nonsense) is ignored and the whole file served, as the RFC allows.
enum ByteRange {
    case whole
    case part(start: Int, length: Int)
    case unsatisfiable

    init(header: String?, size: Int) {
        guard let header, header.hasPrefix("bytes="), !header.contains(",") else {
            self = .whole
            return
        }
        let spec = header.dropFirst("bytes=".count).trimmingSpaces
        guard let dash = spec.firstIndex(of: "-") else {
            self = .whole
            return
        }
        let first = spec[..<dash].trimmingSpaces, last = spec[spec.index(after: dash)...].trimmingSpaces
        if first.isEmpty {
            guard let suffix = Int(last), suffix >= 0 else {
                self = .whole
                return
            }
            self = suffix == 0 || size == 0 ? .unsatisfiable : .part(start: max(0, size - suffix), length: min(suffix, size))
            return
        }
        guard let start = Int(first), start >= 0 else {
            self = .whole
            return
        }
        let end: Int
        if last.isEmpty {
            end = size - 1
        } else {
            guard let given = Int(last), given >= start else {
                self = .whole
                return
            }
            end = min(given, size - 1)
        }
        self = start >= size ? .unsatisfiable : .part(start: start, length: end - start + 1)
    }
}
