/// The order ids of the App Store's purchase receipts (docs/simulator.md, "Look Up Order ID"): `M` and nine
/// characters of `0-9A-Z`, one per transaction, the same for the same seed. No table is kept: an order id is the
/// transaction's offset from the population's id base, times a unit derived from the seed, plus a shift derived
/// from the seed, modulo 36^9, written in base 36; reading one back undoes the three steps.
public struct OrderIdCodec: Sendable, Equatable {
    /// 36^9 = 2^18 * 3^18: every multiplier prime to 6 is a unit.
    static let modulus: UInt64 = 101_559_956_668_416
    static let digits = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)

    let idBase: UInt64
    let multiplier: UInt64
    let inverse: UInt64
    let shift: UInt64

    public init(seed: UInt64) {
        // The population's id base (PopulationGenerator): every transaction id is above it by less than 10^14.
        idBase = 1_000_000_000_000_000 + (SeededRandom.mix(seed) % 90) * 10_000_000_000_000
        var unit = SeededRandom.hash(seed, 0x6f72_6465_72) % Self.modulus | 1
        while unit % 3 == 0 { unit = (unit + 2) % Self.modulus }
        multiplier = unit
        inverse = Self.inverse(of: unit)
        shift = SeededRandom.hash(seed, 0x6f72_6465_7273) % Self.modulus
    }

    /// The order id of transaction `transactionId`; nil for an id outside the population's range.
    public func orderId(of transactionId: UInt64) -> String? {
        guard transactionId >= idBase, transactionId - idBase < Self.modulus else { return nil }
        var value = (Self.product(transactionId - idBase, multiplier) + shift) % Self.modulus
        var text = [UInt8](repeating: 0, count: 9)
        for i in stride(from: 8, through: 0, by: -1) {
            text[i] = Self.digits[Int(value % 36)]
            value /= 36
        }
        return "M" + String(decoding: text, as: UTF8.self)
    }

    /// The transaction id `orderId` names (letters in either case); nil when it is not `M` and nine base-36 digits.
    public func transactionId(of orderId: Substring) -> UInt64? {
        let bytes = Array(orderId.utf8)
        guard bytes.count == 10, bytes[0] == UInt8(ascii: "M") || bytes[0] == UInt8(ascii: "m") else { return nil }
        var value: UInt64 = 0
        for byte in bytes.dropFirst() {
            let upper = byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") ? byte - 32 : byte
            guard let digit = Self.digits.firstIndex(of: upper) else { return nil }
            value = value * 36 + UInt64(digit)
        }
        let offset = Self.product((value + Self.modulus - shift) % Self.modulus, inverse)
        return idBase + offset
    }

    /// `a * b mod 36^9` without overflow (both below the modulus, below 2^47).
    static func product(_ a: UInt64, _ b: UInt64) -> UInt64 {
        modulus.dividingFullWidth(a.multipliedFullWidth(by: b)).remainder
    }

    /// The inverse of `unit` modulo 36^9 (extended Euclid; every value stays below the modulus).
    static func inverse(of unit: UInt64) -> UInt64 {
        var (r0, r1) = (Int64(modulus), Int64(unit))
        var (t0, t1): (Int64, Int64) = (0, 1)
        while r1 != 0 {
            let q = r0 / r1
            (r0, r1) = (r1, r0 - q * r1)
            (t0, t1) = (t1, t0 - q * t1)
        }
        return UInt64(t0 < 0 ? t0 + Int64(modulus) : t0)
    }
}
