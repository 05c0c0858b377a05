import Foundation

/// One way of asking Apple about a subscription: verifyReceipt today (`VerifyReceiptSource`), the App
/// Store Server API next. The pipeline schedules work items against a source and never looks inside the
/// requests: a source turns one item into requests (each spending a `RateBudget`) and each answer into
/// the next step: send (again, or elsewhere), retry after a delay, or finish with a decision, a rejection
/// or nothing known; or stop the run on a configuration error.
///
/// Adding a source: implement `verification(for:)` returning a `SourceVerification` (a small state
/// machine per item), give every request the budget of the Apple limit it spends, and map Apple's answers
/// onto `Decision`s with the pure engine in `ReceiptDomain` (docs/architecture.md, "Adding an Apple source").
public protocol AppleSource: Sendable {
    /// A new verification of one item. Called on the pipeline's queue.
    func verification(for item: WorkItem) -> any SourceVerification

    /// After the run stopped for a configuration error, results not yet written may deserve another
    /// outcome (a receipt refused because the secret is wrong was never really checked). Called on the
    /// pipeline's queue for each such result.
    func revise(_ result: ItemResult, afterConfigurationError reason: String) -> ItemResult

    /// The host (and port, when not the default) a request goes to, for the outage breaker's message:
    /// never a path, a query or credentials.
    func host(of request: SourceRequest) -> String
}

extension AppleSource {
    public func revise(_ result: ItemResult, afterConfigurationError reason: String) -> ItemResult { result }

    public func host(of request: SourceRequest) -> String { "Apple (\(request.budget.name))" }
}

/// `host[:port]` of a URL, or nil when it has none.
func hostAndPort(of url: String) -> String? {
    guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty else { return nil }
    return components.port.map { "\(host):\($0)" } ?? host
}
