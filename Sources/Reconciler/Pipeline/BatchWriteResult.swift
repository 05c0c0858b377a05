/// What the store did with one batch of results (`PipelineStore.write`).
public struct BatchWriteResult: Sendable, Equatable {
    /// Items that ended as `conflict`: the row changed since it was read and was left as the app wrote it.
    public var conflicts: Set<Int64>
    /// Items the store refused because PostgreSQL cannot store one of their values (by subscription id,
    /// with the reason recorded): written as `rejected` (`implausible_value`), their subscription rows
    /// untouched.
    public var refused: [Int64: String]
    /// The batch could not be written in one transaction and was written item by item (the database's
    /// reason, safe to log: no receipt, no row values), nil when it went through at once.
    public var batchFailure: String?
    /// Items of the batch whose result was not written: a worker's lease on them ran out and another worker's result
    /// is the one kept, or the item was already done. They are not counted as this process's results.
    public var notWritten: Set<Int64>

    public init(
        conflicts: Set<Int64> = [],
        refused: [Int64: String] = [:],
        batchFailure: String? = nil,
        notWritten: Set<Int64> = []
    ) {
        (self.conflicts, self.refused, self.batchFailure, self.notWritten) = (
            conflicts, refused, batchFailure, notWritten
        )
    }

    /// The outcome recorded for `result`'s item once this batch is written.
    public func outcome(of result: ItemResult) -> ItemOutcome {
        let id = result.item.subscriptionId
        if conflicts.contains(id) { return .conflict }
        if refused[id] != nil { return .rejected }
        return result.outcome
    }
}
