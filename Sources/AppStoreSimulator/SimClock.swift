import Foundation

/// The simulator's idea of "now": frozen at a given instant (`--now`), or the real wall clock
/// (whole seconds, so answers can be cached per second). Wall clock is right here: it is Apple's clock.
public enum SimClock: Sendable, Equatable {
    case frozen(Int64)
    case real

    public func now() -> Int64 {
        switch self {
        case .frozen(let ms): return ms
        case .real: return Int64(Date().timeIntervalSince1970) * 1000
        }
    }
}
