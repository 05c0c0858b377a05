/// The database side of the pipeline: where pending items come from and results go.
/// Calls arrive one at a time from the pipeline's database queue (never concurrently).
public protocol PipelineStore: AnyObject, Sendable {
    /// Pending items of the run with `subscription_id > after`, in id order, at most `limit`.
    func fetchPending(after subscriptionId: Int64, limit: Int) throws -> [WorkItem]
    /// Writes one batch of results in one transaction; returns the subscription ids that ended as
    /// `conflict` (the row changed since it was read and was left as it is).
    func write(_ results: [ItemResult]) throws -> Set<Int64>
}
