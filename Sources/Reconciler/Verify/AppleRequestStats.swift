import Foundation

/// Counts of the requests a run made to Apple, stored in `reconciliation_runs.apple_stats`
/// (keys documented in docs/reports.md, "`summary.json`").
public struct AppleRequestStats: Sendable, Equatable, Codable {
    public var requests = 0
    /// Requests that repeated an earlier one after a retryable failure.
    public var retries = 0
    /// Requests resent to the other environment (21007/21008).
    public var environmentSwitches = 0
    public var byHTTPStatus: [String: Int] = [:]
    public var byAppleStatus: [String: Int] = [:]
    public var transportErrors: [String: Int] = [:]
    public var elapsedSeconds: Double = 0
    /// Requests per second over the run's processing time.
    public var achievedRate: Double = 0

    enum CodingKeys: String, CodingKey {
        case requests, retries
        case environmentSwitches = "environment_switches"
        case byHTTPStatus = "by_http_status"
        case byAppleStatus = "by_apple_status"
        case transportErrors = "transport_errors"
        case elapsedSeconds = "elapsed_seconds"
        case achievedRate = "achieved_rate"
    }

    public init() {}

    mutating func record(_ answer: SourceAnswer) {
        requests += 1
        if let status = answer.httpStatus { byHTTPStatus[String(status), default: 0] += 1 }
        if let apple = answer.appleStatus { byAppleStatus[String(apple), default: 0] += 1 }
        if let failure = answer.transportFailure { transportErrors[failure, default: 0] += 1 }
    }

    /// Adds another part of the same run (a resumed run keeps counting).
    public mutating func merge(_ other: AppleRequestStats) {
        requests += other.requests
        retries += other.retries
        environmentSwitches += other.environmentSwitches
        byHTTPStatus.merge(other.byHTTPStatus, uniquingKeysWith: +)
        byAppleStatus.merge(other.byAppleStatus, uniquingKeysWith: +)
        transportErrors.merge(other.transportErrors, uniquingKeysWith: +)
        elapsedSeconds += other.elapsedSeconds
        achievedRate = elapsedSeconds > 0 ? Double(requests) / elapsedSeconds : 0
    }

    public func jsonString() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).flatMap { String(data: $0, encoding: .utf8) } ?? "{}"
    }

    public static func fromJSON(_ text: String?) -> AppleRequestStats {
        guard let text, let data = text.data(using: .utf8),
            let stats = try? JSONDecoder().decode(AppleRequestStats.self, from: data)
        else { return AppleRequestStats() }
        return stats
    }
}
