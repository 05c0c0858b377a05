import Foundation
import ReceiptDomain

@testable import Reconciler

/// A `PipelineStore` in memory, for in-process pipeline tests (the real `RunStore` is tested against
/// PostgreSQL elsewhere): pending items in id order, every write recorded, and writes that fail on demand.
final class InMemoryPipelineStore: PipelineStore, @unchecked Sendable {
    struct WriteFailure: Error, CustomStringConvertible {
        var description: String { "injected write failure" }
    }

    private let lock = NSLock()
    private let items: [WorkItem]
    private var writtenValue: [Int64: [ItemResult]] = [:]
    private var batchesValue: [[Int64]] = []
    private var failuresLeft: Int
    private var writeCallsValue = 0
    private var fetchedValue = 0
    private var writtenCountValue = 0
    private var peakUnwrittenValue = 0
    private var statsWrittenValue: [Int] = []
    /// After this many successful writes, every write throws `RunOwnershipLostError` (another process took the run).
    var ownershipLostAfter: Int?

    /// `failingWrites`: how many `write` calls fail before writes succeed (`Int.max`: every one).
    init(count: Int, failingWrites: Int = 0) {
        items = (1...count).map { id in
            WorkItem(
                subscriptionId: Int64(id),
                version: 1,
                stored: StoredSubscription(
                    originalTransactionId: "10000000\(id)",
                    userId: "user-\(id)",
                    productId: "com.example.monthly"
                ),
                receipt: "MIIT\(id)",
                subscriptionGroupId: nil
            )
        }
        failuresLeft = failingWrites
    }

    /// Results written per subscription id (more than one: written twice, a bug).
    var written: [Int64: [ItemResult]] { lock.withLock { writtenValue } }
    var batches: [[Int64]] { lock.withLock { batchesValue } }
    var writeCalls: Int { lock.withLock { writeCallsValue } }
    /// The Apple request count handed to each `write` call, in order.
    var statsWritten: [Int] { lock.withLock { statsWrittenValue } }
    /// The most items handed out by `fetchPending` and not yet written, at any moment.
    var peakUnwritten: Int { lock.withLock { peakUnwrittenValue } }

    func fetchPending(after subscriptionId: Int64, limit: Int) throws -> [WorkItem] {
        lock.withLock {
            let page = Array(
                items.lazy.filter { $0.subscriptionId > subscriptionId && self.writtenValue[$0.subscriptionId] == nil }
                    .prefix(limit)
            )
            fetchedValue += page.count
            peakUnwrittenValue = max(peakUnwrittenValue, fetchedValue - writtenCountValue)
            return page
        }
    }

    func write(_ results: [ItemResult], stats: AppleRequestStats) throws -> BatchWriteResult {
        try lock.withLock {
            writeCallsValue += 1
            statsWrittenValue.append(stats.requests)
            if let after = ownershipLostAfter, batchesValue.count >= after { throw RunOwnershipLostError(runId: 1) }
            if failuresLeft > 0 {
                failuresLeft -= 1
                throw WriteFailure()
            }
            for result in results { writtenValue[result.item.subscriptionId, default: []].append(result) }
            writtenCountValue += results.count
            batchesValue.append(results.map(\.item.subscriptionId))
            return BatchWriteResult()
        }
    }
}
