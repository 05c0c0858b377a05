import AppStoreClient

extension AttemptPolicy {
    /// The run's attempt policy: `--max-attempts`, the backoff's base and cap, the longest `Retry-After` honoured.
    init(_ options: RunOptions) {
        self.init(
            maxAttempts: options.maxAttempts,
            base: .milliseconds(SecondsConversion.milliseconds(options.backoffBaseSeconds)),
            cap: .milliseconds(
                SecondsConversion.milliseconds(max(options.backoffCapSeconds, options.backoffBaseSeconds))
            ),
            jitter: .full,
            maxRetryAfter: .milliseconds(SecondsConversion.milliseconds(options.maxRetryAfterSeconds))
        )
    }
}
