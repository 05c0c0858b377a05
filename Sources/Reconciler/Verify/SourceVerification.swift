/// The verification of one item by an `AppleSource`: a state machine the pipeline drives. `start()` and
/// `next(after:)` are called on the pipeline's queue, one at a time; `perform(_:completion:)` may do its
/// work anywhere and calls `completion` exactly once, on any thread.
public protocol SourceVerification: AnyObject, Sendable {
    /// The first step.
    func start() -> SourceStep
    /// Sends `request` (the pipeline has already spent the rate budget for it).
    func perform(_ request: SourceRequest, completion: @escaping @Sendable (SourceAnswer) -> Void)
    /// The step after `answer`.
    func next(after answer: SourceAnswer) -> SourceStep
}
