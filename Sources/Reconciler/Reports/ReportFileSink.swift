import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A new file written sequentially through a small buffer (POSIX calls, so each failure carries its
/// errno and the path): lets report CSVs be written row by row in constant memory.
///
/// Not Sendable: one report generation owns it from `init` to `close()`.
final class ReportFileSink {
    let path: String
    private var fd: Int32
    private var buffer: [UInt8] = []
    private static let capacity = 64 * 1024

    /// Creates `path` (which must not exist).
    init(path: String, mode: mode_t = 0o644) throws(ReportError) {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw .file(errno, path: path, operation: "create file") }
        buffer.reserveCapacity(Self.capacity)
    }

    deinit {
        if fd >= 0 { Glibc.close(fd) }
    }

    /// Appends `text` as UTF-8.
    func write(_ text: String) throws(ReportError) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= Self.capacity { try flush() }
    }

    private func flush() throws(ReportError) {
        var failure: ReportError?
        buffer.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < bytes.count, let base = bytes.baseAddress {
                let written = Glibc.write(fd, base + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = .file(errno, path: path, operation: "write")
                    return
                }
                offset += written
            }
        }
        buffer.removeAll(keepingCapacity: true)
        if let failure { throw failure }
    }

    /// Flushes, fsyncs and closes the file.
    func close() throws(ReportError) {
        guard fd >= 0 else { return }
        var failure: ReportError?
        do throws(ReportError) { try flush() } catch { failure = error }
        if failure == nil, fsync(fd) != 0 { failure = .file(errno, path: path, operation: "fsync") }
        if Glibc.close(fd) != 0, failure == nil { failure = .file(errno, path: path, operation: "close") }
        fd = -1
        if let failure { throw failure }
    }
}
