extension HTTPRequestParser {
    /// Longest chunk-size line accepted, extensions included (they are ignored, so they need not be long).
    static let maxChunkLineLength = 1024

    /// Decodes as much of a chunked body as is buffered; true once the last chunk and trailers are read.
    mutating func decodeChunkedBody() throws(HTTPParseError) -> Bool {
        while case .chunked(let chunkPhase) = phase {
            switch chunkPhase {
            case .size:
                guard let line = nextLine() else {
                    guard unterminatedLineLength <= Self.maxChunkLineLength else {
                        throw .invalidChunk("A chunk size line is longer than \(Self.maxChunkLineLength) bytes.")
                    }
                    return false
                }
                // Content only, as for the incomplete line above, so the outcome cannot depend on where the
                // bytes were split (counting the line ending let a bare-LF line be one byte longer).
                guard line.content.count <= Self.maxChunkLineLength else {
                    throw .invalidChunk("A chunk size line is longer than \(Self.maxChunkLineLength) bytes.")
                }
                let size = try chunkSize(buffer.slice(line.content))
                buffer.consume(line.length)
                guard size <= limits.maxBodyBytes - chunkedBody.count else {
                    throw .bodyTooLarge(limit: limits.maxBodyBytes)
                }
                phase = .chunked(size == 0 ? .trailers(byteCount: 0) : .data(remaining: size))

            case .data(let remaining):
                let count = min(remaining, buffer.readableCount)
                guard count > 0 else { return false }
                chunkedBody.append(contentsOf: buffer.slice(0..<count))
                buffer.consume(count)
                phase = .chunked(count == remaining ? .dataEnd : .data(remaining: remaining - count))

            case .dataEnd:
                guard buffer.readableCount > 0 else { return false }
                if buffer[0] == ASCII.lf {
                    buffer.consume(1)
                } else if buffer[0] == ASCII.cr {
                    guard buffer.readableCount > 1 else { return false }
                    guard buffer[1] == ASCII.lf else {
                        throw .invalidChunk("Chunk data is not followed by CRLF.")
                    }
                    buffer.consume(2)
                } else {
                    throw .invalidChunk("Chunk data is longer than its declared size.")
                }
                phase = .chunked(.size)

            case .trailers(let byteCount):
                // Trailer fields are read and dropped; they count against the header size limit.
                guard let line = nextLine() else {
                    guard byteCount + unterminatedLineLength <= limits.maxHeaderBytes else {
                        throw .headerTooLarge(limit: limits.maxHeaderBytes)
                    }
                    return false
                }
                buffer.consume(line.length)
                if line.content.isEmpty { return true }
                guard byteCount + line.length <= limits.maxHeaderBytes else {
                    throw .headerTooLarge(limit: limits.maxHeaderBytes)
                }
                phase = .chunked(.trailers(byteCount: byteCount + line.length))
            }
        }
        return false
    }

    /// `chunk-size [ BWS ";" chunk-ext ]`: hexadecimal size, extensions ignored.
    func chunkSize(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> Int {
        var size = 0
        var index = line.startIndex
        while index < line.endIndex, let digit = ASCII.hexValue(line[index]) {
            // Stop before the value could overflow; it is over any sensible limit by then.
            guard size <= limits.maxBodyBytes, size <= Int.max >> 4 else {
                throw .bodyTooLarge(limit: limits.maxBodyBytes)
            }
            size = size << 4 | Int(digit)
            index += 1
        }
        guard index > line.startIndex else {
            throw .invalidChunk("A chunk size is not a hexadecimal number.")
        }
        let rest = line[index...].drop(while: ASCII.isWhitespace)
        guard rest.isEmpty || rest.first == ASCII.semicolon else {
            throw .invalidChunk("Unexpected characters after a chunk size.")
        }
        return size
    }
}
