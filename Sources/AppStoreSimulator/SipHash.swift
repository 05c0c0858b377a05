/// SipHash-2-4, the keyed MAC that seals simulator receipts.
///
/// No crypto library is available to the package; SipHash is a keyed pseudo-random function that is
/// plenty for "tampering with a receipt gives 21003" in a simulator (it is not a security boundary).
struct SipHash: Sendable {
    let k0: UInt64
    let k1: UInt64

    @inline(__always) private static func rotl(_ x: UInt64, _ b: UInt64) -> UInt64 { (x << b) | (x >> (64 - b)) }

    func mac(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        compress(bytes, wide: false).0
    }

    /// SipHash-2-4 with its 128-bit output (the reference's `outlen == 16` variant): one pass over the bytes
    /// for a cache key that two 64-bit MACs with different keys used to take two passes for.
    func mac128(_ bytes: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        compress(bytes, wide: true)
    }

    private func compress(_ bytes: UnsafeRawBufferPointer, wide: Bool) -> (UInt64, UInt64) {
        var v0: UInt64 = 0x736F_6D65_7073_6575 ^ k0
        var v1: UInt64 = 0x646F_7261_6E64_6F6D ^ k1 ^ (wide ? 0xEE : 0)
        var v2: UInt64 = 0x6C79_6765_6E65_7261 ^ k0
        var v3: UInt64 = 0x7465_6462_7974_6573 ^ k1
        @inline(__always) func round() {
            v0 &+= v1
            v1 = SipHash.rotl(v1, 13)
            v1 ^= v0
            v0 = SipHash.rotl(v0, 32)
            v2 &+= v3
            v3 = SipHash.rotl(v3, 16)
            v3 ^= v2
            v0 &+= v3
            v3 = SipHash.rotl(v3, 21)
            v3 ^= v0
            v2 &+= v1
            v1 = SipHash.rotl(v1, 17)
            v1 ^= v2
            v2 = SipHash.rotl(v2, 32)
        }
        let n = bytes.count
        let blocks = n / 8
        for i in 0..<blocks {
            let m = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))
            v3 ^= m
            round()
            round()
            v0 ^= m
        }
        var last = UInt64(n & 0xFF) << 56
        var shift: UInt64 = 0
        for i in (blocks * 8)..<n {
            last |= UInt64(bytes[i]) << shift
            shift += 8
        }
        v3 ^= last
        round()
        round()
        v0 ^= last
        v2 ^= wide ? 0xEE : 0xFF
        round()
        round()
        round()
        round()
        let first = v0 ^ v1 ^ v2 ^ v3
        guard wide else { return (first, 0) }
        v1 ^= 0xDD
        round()
        round()
        round()
        round()
        return (first, v0 ^ v1 ^ v2 ^ v3)
    }

    func mac(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { mac($0) } }
}
