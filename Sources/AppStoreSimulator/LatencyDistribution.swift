import Foundation

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
