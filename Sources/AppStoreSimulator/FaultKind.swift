import Foundation

/// A kind of failure the simulator can inject into verifyReceipt answers.
public enum FaultKind: String, Sendable, CaseIterable {
    case http500 = "http500"
    case http503 = "http503"
    case http429 = "429"
    case reset = "reset"
    case hang = "hang"
    case status21005 = "21005"
    case status21002 = "21002"
    case status211xx = "211xx"
    case malformedJSON = "malformed-json"
    case truncated = "truncated"
}

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

    public init(seed: UInt64, rates: [FaultKind: Double] = [:], latency: LatencyDistribution = .none,
                retryAfterSeconds: Int = 1, hangMilliseconds: Int64 = 60_000) {
        self.seed = seed
        self.rates = rates
        self.latency = latency
        self.retryAfterSeconds = retryAfterSeconds
        self.hangMilliseconds = hangMilliseconds
    }

    public var isEmpty: Bool { rates.values.allSatisfy { $0 <= 0 } && latency == .none }

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

/// Added latency per request: none, fixed, uniform between two values, or normal (clamped at 0).
public enum LatencyDistribution: Sendable, Equatable {
    case none
    case fixed(Int64)
    case uniform(Int64, Int64)
    case normal(mean: Double, stddev: Double)

    /// Parses `50`, `uniform:10-100` or `normal:50,10` (milliseconds); nil when malformed.
    public init?(parsing text: String) {
        let t = text.trimmingCharacters(in: .whitespaces)
        if let v = Int64(t), v >= 0 {
            self = v == 0 ? .none : .fixed(v)
        } else if t.hasPrefix("uniform:") {
            let parts = t.dropFirst(8).split(separator: "-").map { Int64($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 2, let a = parts[0], let b = parts[1], a >= 0, b >= a else { return nil }
            self = .uniform(a, b)
        } else if t.hasPrefix("normal:") {
            let parts = t.dropFirst(7).split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 2, let m = parts[0], let s = parts[1], m >= 0, s >= 0, m.isFinite, s.isFinite else {
                return nil
            }
            self = .normal(mean: m, stddev: s)
        } else {
            return nil
        }
    }

    func sample(_ a: UInt64, _ b: UInt64) -> Int64 {
        switch self {
        case .none: return 0
        case .fixed(let v): return v
        case .uniform(let lo, let hi): return lo + Int64(a % UInt64(hi - lo + 1))
        case .normal(let mean, let sd):
            let u1 = max(SeededRandom.unit(a), 1e-12)
            let u2 = SeededRandom.unit(b)
            let z = (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
            return max(0, Int64((mean + sd * z).rounded()))
        }
    }
}
