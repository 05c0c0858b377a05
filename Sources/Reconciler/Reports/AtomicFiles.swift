import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Low-level file writes for reports and the metrics file: POSIX calls so every failure carries its
/// errno (ENOSPC, EACCES, EROFS) and is reported with the path, and data is fsync'ed before a rename
/// makes it visible.
enum AtomicFiles {
    /// Creates `path` (which must not exist), writes `data`, fsyncs and closes it.
    static func writeNewFile(_ path: String, _ data: Data, mode: mode_t = 0o644) throws(ReportError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw .file(errno, path: path, operation: "create file") }
        var failure: ReportError?
        data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < buffer.count, let base = buffer.baseAddress {
                let written = write(fd, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = .file(errno, path: path, operation: "write")
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(fd) != 0 { failure = .file(errno, path: path, operation: "fsync") }
        if close(fd) != 0, failure == nil { failure = .file(errno, path: path, operation: "close") }
        if let failure {
            unlink(path)
            throw failure
        }
    }

    /// Writes `data` to a temporary name beside `path`, fsyncs it and renames it over `path`: a reader sees the old
    /// file or the new one, never half of one.
    static func replace(_ path: String, _ data: Data) throws(ReportError) {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let temporary = "\(directory)/.tmp-\(name)-\(uniqueSuffix())"
        try writeNewFile(temporary, data)
        do throws(ReportError) {
            try rename(temporary, path)
        } catch {
            removeTree(temporary)
            throw error
        }
    }

    /// Creates the directory `path` and its missing parents.
    static func makeDirectories(_ path: String) throws(ReportError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw ReportError(.notWritable, path: path, "exists and is not a directory")
            }
            return
        }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != path { try makeDirectories(parent) }
        if mkdir(path, 0o755) != 0, errno != EEXIST { throw .file(errno, path: path, operation: "create directory") }
    }

    /// Makes a fresh directory `path` (must not exist).
    static func makeDirectory(_ path: String) throws(ReportError) {
        if mkdir(path, 0o755) != 0 { throw .file(errno, path: path, operation: "create directory") }
    }

    static func rename(_ from: String, _ to: String) throws(ReportError) {
        if Glibc.rename(from, to) != 0 { throw .file(errno, path: to, operation: "rename \(from) to") }
    }

    /// fsyncs a directory so a rename inside it is durable (best effort).
    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    /// Removes a file or directory tree; errors ignored (used for clean-up).
    static func removeTree(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// A short random suffix for temporary names.
    static func uniqueSuffix() -> String {
        "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }
}
