import ReceiptDomain

/// Get Notification History could not be read to the end in production (an error Apple does not document
/// as retryable, or retries exhausted): the run fails (exit 1) with its cursor where the last committed
/// page left it, so `run --resume` or the next run reads on from there.
public struct NotificationHistoryError: Error, CustomStringConvertible, Sendable {
    public let environment: AppleEnvironment
    public let reason: String

    public init(environment: AppleEnvironment, reason: String) {
        self.environment = environment
        self.reason = reason
    }

    public var description: String {
        "Get Notification History (\(environment.rawValue)) failed: \(reason); the cursor stays at the last page read"
    }
}
