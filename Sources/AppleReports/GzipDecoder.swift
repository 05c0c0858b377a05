import CZlib
import Foundation

/// Decompresses a whole gzip file in memory (zlib's inflate; Apple's report files are at most tens of MB). Several
/// gzip members one after another are read as one stream, as `gunzip` does; a damaged or truncated stream is an error.
enum GzipDecoder {
    /// Whether `data` starts with gzip's magic bytes (1f 8b).
    static func isGzip(_ data: Data) -> Bool {
        data.count >= 2 && data[data.startIndex] == 0x1f && data[data.startIndex + 1] == 0x8b
    }

    /// The decompressed bytes, or a description of what is wrong with the stream.
    static func decompress(_ data: Data) -> Result<Data, GzipFailure> {
        var stream = z_stream()
        guard czlib_inflate_init_gzip(&stream) == Z_OK else { return .failure(GzipFailure("zlib could not start")) }
        defer { inflateEnd(&stream) }
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        let input = [UInt8](data)
        var failure: GzipFailure?
        input.withUnsafeBufferPointer { source in
            stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
            stream.avail_in = UInt32(source.count)
            while true {
                let status = chunk.withUnsafeMutableBufferPointer { buffer -> Int32 in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = UInt32(buffer.count)
                    let status = inflate(&stream, Z_NO_FLUSH)
                    output.append(buffer.baseAddress!, count: buffer.count - Int(stream.avail_out))
                    return status
                }
                if status == Z_STREAM_END {
                    // Another member may follow (concatenated gzip files).
                    guard stream.avail_in > 0 else { return }
                    guard inflateReset(&stream) == Z_OK else {
                        failure = GzipFailure("zlib could not read the next gzip member")
                        return
                    }
                    continue
                }
                if status == Z_OK { continue }
                if status == Z_BUF_ERROR && stream.avail_in == 0 {
                    failure = GzipFailure("the gzip data ends before its end (a truncated download?)")
                    return
                }
                let message = stream.msg.map { String(cString: $0) } ?? "zlib status \(status)"
                failure = GzipFailure("the gzip data is damaged: \(message)")
                return
            }
        }
        if let failure { return .failure(failure) }
        return .success(output)
    }
}

/// What is wrong with a gzip stream.
struct GzipFailure: Error, Sendable {
    let message: String
    init(_ message: String) { self.message = message }
}
