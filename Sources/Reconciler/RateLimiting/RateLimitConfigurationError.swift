/// A rejected rate-limiting setting (token bucket, backoff, adaptive controller).
///
/// Thrown by initialisers so that a bad command-line value is reported instead of
/// crashing the nightly run; `description` names the offending parameter and value.
public struct RateLimitConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The parameter that was rejected, e.g. `rate` or `burst`.
    public let parameter: String
    /// Why it was rejected, e.g. `must be a finite number > 0, got -1.0`.
    public let problem: String

    public init(parameter: String, problem: String) {
        self.parameter = parameter
        self.problem = problem
    }

    public var description: String { "\(parameter): \(problem)" }
}
