import Foundation

/// What the pipeline does next for one item.
public enum SourceStep: Sendable {
    /// Send this request now (subject to its rate budget and the run's concurrency).
    case send(SourceRequest)
    /// Send this request again after the run's backoff, and not before `earliest` when Apple said so.
    /// `reason` is recorded if the backoff gives up (the item then ends `unresolved`).
    case retry(SourceRequest, earliest: Date?, reason: String, appleStatus: Int?)
    /// The item is done.
    case finished(SourceResult)
    /// The item is done and the run must stop: our configuration is wrong (exit 78).
    case stopRun(SourceResult, configurationError: String)
}
