#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a file descriptor in fixed-size chunks into one reusable buffer, so the import
/// parser's memory does not depend on the file's size. Not thread-safe (one consumer).
final class ChunkedByteReader {
    /// A failed `read(2)`, with its errno.
    struct ReadError: Error {
        let errno: Int32
        var message: String { String(cString: strerror(errno)) }
    }

    private let fd: Int32
    /// The chunk buffer; valid bytes are `buffer[start..<end]`.
    private(set) var buffer: [UInt8]
    var start = 0
    private(set) var end = 0
    private(set) var isAtEOF = false

    init(fileDescriptor: Int32, chunkSize: Int) {
        fd = fileDescriptor
        buffer = [UInt8](repeating: 0, count: max(16, chunkSize))
    }

    /// The unread bytes currently buffered.
    var available: Int { end - start }

    /// Reads more bytes after the buffered ones (moving them to the front first).
    /// Returns the number of bytes read; 0 means end of file.
    @discardableResult
    func readMore() throws(ReadError) -> Int {
        if isAtEOF { return 0 }
        if start > 0 {
            let pending = end - start
            if pending > 0 {
                buffer.withUnsafeMutableBufferPointer { pointer in
                    guard let base = pointer.baseAddress else { return }
                    (base).update(from: base + start, count: pending)
                }
            }
            start = 0
            end = pending
        }
        if end == buffer.count { return 0 }  // full: the caller must consume first
        while true {
            let count = buffer.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return read(fd, base + end, raw.count - end)
            }
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                throw ReadError(errno: code)
            }
            if count == 0 { isAtEOF = true }
            end += count
            return count
        }
    }

    /// Fills the buffer until at least `count` bytes are available or the file ends.
    func fill(atLeast count: Int) throws(ReadError) {
        while available < count && !isAtEOF {
            try readMore()
        }
    }
}
