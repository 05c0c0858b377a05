/// A cursor over the bytes of a date PostgreSQL printed, for `PostgresDateCodec.parse`: runs of ASCII digits
/// and single expected bytes, read left to right.
struct PostgresDateScanner {
    private let bytes: [UInt8]
    /// The index of the next byte to read.
    private(set) var index = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Whether every byte has been read.
    var isAtEnd: Bool { index == bytes.count }

    /// The value of the next ASCII digits, at most `max` of them, read and consumed; nil when there are fewer
    /// than `min`.
    mutating func digits(min: Int, max: Int) -> Int64? {
        var value: Int64 = 0
        var n = 0
        while index < bytes.count, n < max, bytes[index] >= 48, bytes[index] <= 57 {
            value = value * 10 + Int64(bytes[index] - 48)
            index += 1
            n += 1
        }
        return n >= min ? value : nil
    }

    /// Consumes the next byte when it is `c`, and tells whether it was.
    mutating func expect(_ c: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == c else { return false }
        index += 1
        return true
    }
}
