import Foundation

/// Per-request fault decision, deterministic under the seed: request number `n` draws one uniform
/// number u = hash(seed, n); the kinds own consecutive slices of [0, 1) as wide as their rates (in
/// `FaultKind.allCases` order), so each kind happens at exactly its rate. If the rates add up to more
/// than 1 they are scaled down proportionally. Latency draws from its own hash, independently.
public struct FaultPlan: Sendable, Equatable {
    public var seed: UInt64
    public var rates: [FaultKind: Double]
    public var latency: LatencyDistribution
    /// Seconds sent in `Retry-After` with 429 (faults and `--max-rps`).
    public var retryAfterSeconds: Int
    /// How long a hung request is held before the connection is closed.
    public var hangMilliseconds: Int64
    /// Server API signature faults, drawn independently of the kinds above (their own slices of their own
    /// uniform number), applied only to answers that would otherwise be signed and sent whole.
    public var signatureRates: [SignatureFault: Double] = [:]
    /// Share of subscriptions whose every Server API answer is signed with a fault
    /// (`SignatureFault.forSubscription`), so the export can list them.
    public var faultySubscriptionRate: Double = 0

    public init(
        seed: UInt64,
        rates: [FaultKind: Double] = [:],
        latency: LatencyDistribution = .none,
        retryAfterSeconds: Int = 1,
        hangMilliseconds: Int64 = 60_000
    ) {
        self.seed = seed
        self.rates = rates
        self.latency = latency
        self.retryAfterSeconds = retryAfterSeconds
        self.hangMilliseconds = hangMilliseconds
    }

    public var isEmpty: Bool {
        rates.values.allSatisfy { $0 <= 0 } && signatureRates.values.allSatisfy { $0 <= 0 } && latency == .none
    }

    /// The fault for request number `sequence`, or nil for a normal answer.
    public func decide(sequence: UInt64) -> FaultKind? {
        let total = FaultKind.allCases.reduce(0.0) { $0 + max(0, rates[$1] ?? 0) }
        guard total > 0 else { return nil }
        let scale = total > 1 ? 1 / total : 1
        let u = SeededRandom.unit(SeededRandom.hash(seed, 0xFA17, sequence))
        var edge = 0.0
        for kind in FaultKind.allCases {
            edge += max(0, rates[kind] ?? 0) * scale
            if u < edge { return kind }
        }
        return nil
    }

    /// The signature fault for request number `sequence`, or nil.
    public func decideSignature(sequence: UInt64) -> SignatureFault? {
        let total = SignatureFault.allCases.reduce(0.0) { $0 + max(0, signatureRates[$1] ?? 0) }
        guard total > 0 else { return nil }
        let scale = total > 1 ? 1 / total : 1
        let u = SeededRandom.unit(SeededRandom.hash(seed, 0x516E, sequence))
        var edge = 0.0
        for kind in SignatureFault.allCases {
            edge += max(0, signatureRates[kind] ?? 0) * scale
            if u < edge { return kind }
        }
        return nil
    }

    /// Milliseconds to delay request number `sequence`.
    public func delay(sequence: UInt64) -> Int64 {
        latency.sample(SeededRandom.hash(seed, 0x1A7E, sequence), SeededRandom.hash(seed, 0x1A7F, sequence))
    }

    /// The 211xx status for request `sequence` and how `is_retryable` is spelled: six variants in turn
    /// (`is_retryable` true, `is_retryable` "true", `is-retryable` "1", `is-retryable` true, absent,
    /// `is_retryable` false), so one in six is not retryable and one in six says nothing.
    public static func status211xx(sequence: UInt64) -> (status: Int, retryable: (key: String, json: String)?) {
        let status = 21100 + Int(sequence % 100)
        switch sequence % 6 {
        case 0: return (status, ("is_retryable", "true"))
        case 1: return (status, ("is_retryable", "\"true\""))
        case 2: return (status, ("is-retryable", "\"1\""))
        case 3: return (status, ("is-retryable", "true"))
        case 4: return (status, nil)
        default: return (status, ("is_retryable", "false"))
        }
    }
}
