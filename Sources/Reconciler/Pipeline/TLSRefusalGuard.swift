/// Stops a run whose HTTPS connections to Apple are refused for a reason retrying cannot fix: an
/// untrusted or self-signed certificate, a certificate for another host, no TLS version in common
/// (docs/operations.md, "HTTPS to Apple"). Such a refusal repeats on every request until the
/// configuration changes (the CA file, the URL, a proxy in between), so the run stops as a configuration
/// error (exit 78, unfinished items pending) instead of burning every item's retries and then the outage
/// breaker's window.
///
/// It takes `threshold` (3) refusals in a row: one refusal among good answers (say one bad node behind
/// Apple's load balancer) is retried like any transport failure. An HTTP response resets the count (TLS
/// worked); other transport failures neither count nor reset it. Pure: no clock, no I/O.
public struct TLSRefusalGuard: Sendable {
    public static let defaultThreshold = 3

    public let threshold: Int
    public private(set) var consecutiveRefusals = 0
    /// The host and reason of the latest refusal.
    public private(set) var lastRefusal: (host: String, reason: String)?
    public private(set) var isTripped = false

    public init(threshold: Int = TLSRefusalGuard.defaultThreshold) {
        self.threshold = max(1, threshold)
    }

    /// Feeds one answer; returns true when it trips the guard (once).
    public mutating func record(_ answer: SourceAnswer, host: @autoclosure () -> String) -> Bool {
        guard !isTripped else { return false }
        if let reason = answer.tlsRefusal {
            consecutiveRefusals += 1
            lastRefusal = (host(), reason)
            if consecutiveRefusals >= threshold {
                isTripped = true
                return true
            }
        } else if answer.httpStatus != nil {
            consecutiveRefusals = 0
        }
        return false
    }

    /// The run's error once tripped: the host, the reason and what to check (never a secret: the reason
    /// is curl's TLS message, which names certificates and hosts, and passes through the `Redactor`).
    public var message: String {
        let host = lastRefusal?.host ?? "?"
        let reason = String(Redactor.shared.redact(lastRefusal?.reason ?? "?").prefix(400))
        return
            "TLS refused by \(host): \(reason) (\(consecutiveRefusals) requests in a row); check the CA file "
            + "(--ca-file, APPLE_CA_FILE), the Apple URLs and any proxy in between"
    }
}
