/// One item on its way through the pipeline. Confined to the pipeline's queue.
final class ItemTask: @unchecked Sendable {
    let item: WorkItem
    let verification: any SourceVerification
    /// Requests sent for this item (switches and retries included).
    var requests = 0

    init(item: WorkItem, verification: any SourceVerification) {
        self.item = item
        self.verification = verification
    }
}
