import Testing

@testable import AppStoreSimulator

/// SipHash-2-4 against the reference implementation's published vectors (key 00 01 .. 0f, message 00 01 ..
/// of the given length; digests as little-endian bytes): the receipt MAC (64-bit) and the receipt cache
/// key (128-bit) are the algorithm they are named after.
@Suite struct SipHashTests {
    static let sip = SipHash(k0: 0x0706_0504_0302_0100, k1: 0x0F0E_0D0C_0B0A_0908)

    static func bytes(_ words: [UInt64]) -> [UInt8] {
        words.flatMap { word in (0..<8).map { UInt8(truncatingIfNeeded: word >> (8 * $0)) } }
    }

    static func message(_ length: Int) -> [UInt8] { (0..<length).map { UInt8($0) } }

    @Test func sixtyFourBitVectors() {
        let expected: [[UInt8]] = [
            [0x31, 0x0E, 0x0E, 0xDD, 0x47, 0xDB, 0x6F, 0x72],
            [0xFD, 0x67, 0xDC, 0x93, 0xC5, 0x39, 0xF8, 0x74],
            [0x5A, 0x4F, 0xA9, 0xD9, 0x09, 0x80, 0x6C, 0x0D],
        ]
        for (length, digest) in expected.enumerated() {
            #expect(Self.bytes([Self.sip.mac(Self.message(length))]) == digest)
        }
    }

    @Test func oneHundredTwentyEightBitVectors() {
        let expected: [[UInt8]] = [
            [0xA3, 0x81, 0x7F, 0x04, 0xBA, 0x25, 0xA8, 0xE6, 0x6D, 0xF6, 0x72, 0x14, 0xC7, 0x55, 0x02, 0x93],
            [0xDA, 0x87, 0xC1, 0xD8, 0x6B, 0x99, 0xAF, 0x44, 0x34, 0x76, 0x59, 0x11, 0x9B, 0x22, 0xFC, 0x45],
            [0x81, 0x77, 0x22, 0x8D, 0xA4, 0xA4, 0x5D, 0xC7, 0xFC, 0xA3, 0x8B, 0xDE, 0xF6, 0x0A, 0xFF, 0xE4],
        ]
        for (length, digest) in expected.enumerated() {
            let (h0, h1) = Self.message(length).withUnsafeBytes { Self.sip.mac128($0) }
            #expect(Self.bytes([h0, h1]) == digest)
        }
    }
}
