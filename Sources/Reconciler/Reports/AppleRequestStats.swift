import Foundation

/// The Apple request statistics a run stores in `reconciliation_runs.apple_stats` (jsonb).
///
/// Parsed tolerantly: a missing or malformed key reads as zero/empty, so an old or partial run
/// still gets a report.
public struct AppleRequestStats: Sendable, Equatable, Codable {
    public var requests: Int
    public var retries: Int
    /// HTTP status code (as text) -> number of responses.
    public var byHTTPStatus: [String: Int]
    /// Apple `status` field (as text) -> number of responses.
    public var byAppleStatus: [String: Int]
    /// Transport error kind (`timeout`, `connection`, ...) -> count.
    public var transportErrors: [String: Int]
    public var elapsedSeconds: Double
    /// Requests per second actually achieved.
    public var achievedRate: Double

    enum CodingKeys: String, CodingKey {
        case requests, retries
        case byHTTPStatus = "by_http_status"
        case byAppleStatus = "by_apple_status"
        case transportErrors = "transport_errors"
        case elapsedSeconds = "elapsed_seconds"
        case achievedRate = "achieved_rate"
    }

    public init(
        requests: Int = 0, retries: Int = 0, byHTTPStatus: [String: Int] = [:], byAppleStatus: [String: Int] = [:],
        transportErrors: [String: Int] = [:], elapsedSeconds: Double = 0, achievedRate: Double = 0
    ) {
        self.requests = requests
        self.retries = retries
        self.byHTTPStatus = byHTTPStatus
        self.byAppleStatus = byAppleStatus
        self.transportErrors = transportErrors
        self.elapsedSeconds = elapsedSeconds
        self.achievedRate = achievedRate
    }

    /// Parses the jsonb text of `apple_stats`; anything unreadable becomes zero/empty.
    public init(json: String) {
        self.init()
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else { return }
        requests = Self.int(object["requests"]) ?? 0
        retries = Self.int(object["retries"]) ?? 0
        byHTTPStatus = Self.counts(object["by_http_status"])
        byAppleStatus = Self.counts(object["by_apple_status"])
        transportErrors = Self.counts(object["transport_errors"])
        elapsedSeconds = Self.double(object["elapsed_seconds"]) ?? 0
        achievedRate = Self.double(object["achieved_rate"]) ?? 0
    }

    private static func int(_ value: Any?) -> Int? {
        if let number = value as? NSNumber { return number.intValue }
        if let text = value as? String { return Int(text) }
        return nil
    }

    private static func double(_ value: Any?) -> Double? {
        if let number = value as? NSNumber {
            let double = number.doubleValue
            return double.isFinite ? double : nil
        }
        if let text = value as? String, let double = Double(text), double.isFinite { return double }
        return nil
    }

    private static func counts(_ value: Any?) -> [String: Int] {
        guard let dictionary = value as? [String: Any] else { return [:] }
        var result: [String: Int] = [:]
        for (key, raw) in dictionary {
            if let count = int(raw) { result[key] = count }
        }
        return result
    }
}
