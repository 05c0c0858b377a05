/// The verification of an item whose row names no configured app (docs/architecture.md, "Several apps"):
/// finished at once as `no_app`, without a request, so its row is untouched and never counted as rejected.
final class NoAppVerification: SourceVerification {
    /// Nothing is ever asked.
    struct Answer: Sendable {}

    let bundleId: String

    init(bundleId: String) {
        self.bundleId = bundleId
    }

    func start() -> SourceStep {
        .finished(SourceResult(kind: .noApp(bundleId), environment: nil, appleStatus: nil))
    }

    /// Never called: `start()` finishes the item. Answers as a transport failure should a caller do it anyway.
    func perform(_ request: SourceRequest, completion: @escaping @Sendable (SourceAnswer, Answer) -> Void) {
        completion(
            SourceAnswer(
                request: request,
                httpStatus: nil,
                appleStatus: nil,
                transportFailure: "no app configured for bundle id \(bundleId)",
                throttled: false
            ),
            Answer()
        )
    }

    func next(after answer: SourceAnswer, _ own: Answer) -> SourceStep {
        start()
    }
}
