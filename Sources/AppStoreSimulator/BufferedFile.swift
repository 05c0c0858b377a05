import Foundation

/// A write-only file with a 1 MiB buffer (exports can be hundreds of megabytes).
final class BufferedFile {
    private let path: String
    private let handle: UnsafeMutablePointer<FILE>
    private var buffer: [UInt8] = []

    init(path: String) throws {
        guard let h = fopen(path, "wb") else {
            throw PopulationExporter.ExportError(path: path, reason: String(cString: strerror(errno)))
        }
        self.path = path
        self.handle = h
        buffer.reserveCapacity(1 << 20)
    }

    func write(_ bytes: [UInt8]) throws {
        buffer += bytes
        if buffer.count >= 1 << 20 { try flush() }
    }

    private func flush() throws {
        let written = buffer.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, handle) }
        guard written == buffer.count else {
            throw PopulationExporter.ExportError(path: path, reason: String(cString: strerror(errno)))
        }
        buffer.removeAll(keepingCapacity: true)
    }

    func close() throws {
        try flush()
        guard fclose(handle) == 0 else {
            throw PopulationExporter.ExportError(path: path, reason: String(cString: strerror(errno)))
        }
    }
}
