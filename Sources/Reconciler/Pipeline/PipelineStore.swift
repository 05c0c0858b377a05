/// The database side of the pipeline: where pending items come from and results go.
/// `fetchPending` calls arrive one at a time from the pipeline's read queue and `write` calls one at a
/// time from its write queue: the two may run concurrently, so they must not share a connection.
public protocol PipelineStore: AnyObject, Sendable {
    /// Pending items of the run with `subscription_id > after`, in id order, at most `limit`.
    func fetchPending(after subscriptionId: Int64, limit: Int) throws -> [WorkItem]
    /// Writes one batch of results (in one transaction, or item by item when the batch cannot be written
    /// as a whole), with `stats`, the pipeline's requests to Apple so far; says which items ended as `conflict`
    /// and which the store refused. Throws only when the database cannot take even an item's bookkeeping (the
    /// run then stops), or `RunOwnershipLostError` when the run is no longer this process's (nothing written).
    func write(_ results: [ItemResult], stats: AppleRequestStats) throws -> BatchWriteResult
}
