/// A small deterministic pseudo-random generator (SplitMix64) and hash mixer.
///
/// Swift's `Hasher` and `SystemRandomNumberGenerator` are seeded per process; the simulator needs the
/// same population, the same fault decisions and the same bytes for the same `--seed` on every run.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { self.state = seed }

    /// Derives an independent stream from a seed and any number of labels.
    public init(_ seed: UInt64, _ labels: UInt64...) {
        var s = SeededRandom.mix(seed)
        for l in labels { s = SeededRandom.mix(s ^ SeededRandom.mix(l &+ 0x632B_E59B_D9B4_E019)) }
        self.state = s
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return SeededRandom.mix(state)
    }

    /// The SplitMix64 finalizer: a good 64-bit bijective mixer.
    public static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Hash of several words, order-sensitive.
    public static func hash(_ words: UInt64...) -> UInt64 {
        var h: UInt64 = 0x243F_6A88_85A3_08D3
        for w in words { h = mix(h ^ mix(w &+ 0x9E37_79B9_7F4A_7C15)) }
        return h
    }

    /// A uniform double in [0, 1) from 53 random bits.
    public static func unit(_ bits: UInt64) -> Double { Double(bits >> 11) * (1.0 / 9_007_199_254_740_992.0) }

    public mutating func unit() -> Double { SeededRandom.unit(next()) }

    /// Uniform integer in `range` (bias negligible for the small ranges used here).
    public mutating func int(_ range: ClosedRange<Int>) -> Int {
        let span = UInt64(range.upperBound - range.lowerBound + 1)
        return range.lowerBound + Int(next() % span)
    }

    /// Uniform Int64 in [lo, hi].
    public mutating func between(_ lo: Int64, _ hi: Int64) -> Int64 {
        guard hi > lo else { return lo }
        return lo + Int64(next() % UInt64(hi - lo + 1))
    }

    public mutating func chance(_ p: Double) -> Bool { unit() < p }
}
