/// What the pipeline does next for one item.
public enum SourceStep: Sendable {
    /// Send this request now (subject to its rate budget and the run's concurrency).
    case send(SourceRequest)
    /// Send this request again after `afterNanoseconds`: the wait the item's `AttemptPlan` decided (backoff with
    /// jitter, never shorter than Apple's `Retry-After`); the plan gives up itself with a `.finished`.
    case retry(SourceRequest, afterNanoseconds: UInt64)
    /// The item is done.
    case finished(SourceResult)
    /// The item is done and the run must stop: our configuration is wrong (exit 78).
    case stopRun(SourceResult, configurationError: String)
}
