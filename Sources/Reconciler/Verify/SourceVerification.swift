/// The verification of one item by an `AppleSource`: a state machine the pipeline drives. `start()` and
/// `next(after:_:)` are called on the pipeline's queue, one at a time; `perform(_:completion:)` may do its
/// work anywhere and calls `completion` exactly once, on any thread.
public protocol SourceVerification: AnyObject, Sendable {
    /// The source's own view of one answer (what it read and verified, a decision made off the pipeline's queue),
    /// handed back to it as it was made: the pipeline carries it without knowing it.
    associatedtype Answer: Sendable
    /// The first step.
    func start() -> SourceStep
    /// The first step, with the run's attempt policy and clock (what the pipeline calls; by default `start()`).
    func start(_ context: AttemptContext) -> SourceStep
    /// Sends `request` (the pipeline has already spent the rate budget for it): the pipeline's view of the answer
    /// (statistics, the rate budget, reachability), and the source's own.
    func perform(_ request: SourceRequest, completion: @escaping @Sendable (SourceAnswer, Answer) -> Void)
    /// The step after an answer.
    func next(after answer: SourceAnswer, _ own: Answer) -> SourceStep
}

extension SourceVerification {
    public func start(_ context: AttemptContext) -> SourceStep { start() }
}
