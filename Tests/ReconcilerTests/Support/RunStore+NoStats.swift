import ReceiptDomain

@testable import Reconciler

extension RunStore {
    /// A batch written with no requests to Apple to record: what the store tests that are not about statistics do.
    func write(_ results: [ItemResult]) throws -> BatchWriteResult {
        try write(results, stats: AppleRequestStats())
    }
}
