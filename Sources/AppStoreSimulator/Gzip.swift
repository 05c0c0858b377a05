import CZlib

/// gzip for the report downloads (Apple sends `application/a-gzip`): zlib's deflate with a gzip wrapper.
enum Gzip {
    /// `bytes` compressed as one gzip member.
    static func compress(_ bytes: [UInt8]) -> [UInt8] {
        var stream = z_stream()
        guard czlib_deflate_init_gzip(&stream, Z_BEST_COMPRESSION) == Z_OK else {
            preconditionFailure("zlib could not start a gzip stream")
        }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))) + 64)
        var input = bytes
        let status = input.withUnsafeMutableBufferPointer { inPtr in
            output.withUnsafeMutableBufferPointer { outPtr in
                stream.next_in = inPtr.baseAddress
                stream.avail_in = uInt(inPtr.count)
                stream.next_out = outPtr.baseAddress
                stream.avail_out = uInt(outPtr.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        // deflateBound is enough for one Z_FINISH call over the whole input.
        precondition(status == Z_STREAM_END, "zlib deflate did not finish (\(status))")
        return Array(output.prefix(Int(stream.total_out)))
    }
}
