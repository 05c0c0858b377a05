import Dispatch
import Foundation
import Logging
import Postgres
import ReceiptDomain
import Synchronization
import Testing

@testable import Reconciler

/// Workers' chunk leases (docs/architecture.md, "Workers") against a real PostgreSQL, two stores standing for two
/// workers: the items are divided once, each worker reads only the chunks it claimed, a chunk whose lease ran out
/// goes to the other worker (whose result is the one kept), and every item is written once with `remaining`
/// counting down to zero.
@Suite struct WorkerLeaseTests {
    /// A run of `count` pending items and two workers' stores on it.
    static func world(_ count: Int) throws -> (StoreWorld, Int64, [Int64]) {
        let world = try StoreWorld()
        let ids = try (0..<count).map { try world.insertSubscription("70\($0)", expiresAt: StoreWorld.day(1)) }
        return (world, try world.createRun(items: ids), ids)
    }

    static func workerStore(_ world: StoreWorld, runId: Int64, _ name: String) throws -> (RunStore, WorkerLease) {
        let store = try world.store(runId: runId)
        let lease = WorkerLease(workerId: name, seconds: 30)
        store.lease = lease
        return (store, lease)
    }

    static func unchanged(_ items: [WorkItem]) -> [ItemResult] {
        items.map { TestDecisions.decided($0, TestDecisions.decision($0, expiresAt: StoreWorld.day(1))) }
    }

    static func chunks(_ world: StoreWorld, runId: Int64) throws -> [(first: Int64, last: Int64, remaining: Int)] {
        try world.connection.query(
            "SELECT first_id, last_id, remaining FROM run_chunks WHERE run_id = $1 ORDER BY first_id",
            [runId]
        ).map { (try $0.decode("first_id"), try $0.decode("last_id"), try $0.decode("remaining")) }
    }

    @Test func theItemsAreDividedOnceIntoChunksThatCoverThemAll() throws {
        let (world, runId, ids) = try Self.world(100)
        // 100 items in chunks of ceil(100 / 32) = 4.
        #expect(try WorkerLease.divide(runId: runId, world.connection) == 25)
        #expect(try WorkerLease.divide(runId: runId, world.connection) == 0)
        let chunks = try Self.chunks(world, runId: runId)
        #expect(chunks.map(\.remaining).reduce(0, +) == 100)
        #expect(chunks.allSatisfy { $0.remaining <= 4 })
        #expect(chunks.first?.first == ids.min() && chunks.last?.last == ids.max())
        for (a, b) in zip(chunks, chunks.dropFirst()) { #expect(a.last < b.first) }
    }

    @Test func twoWorkersReadDisjointChunksAndFinishThemAll() throws {
        let (world, runId, ids) = try Self.world(100)
        try WorkerLease.divide(runId: runId, world.connection)
        let (storeA, leaseA) = try Self.workerStore(world, runId: runId, "a")
        let (storeB, leaseB) = try Self.workerStore(world, runId: runId, "b")
        var seenA: [WorkItem] = []
        var seenB: [WorkItem] = []
        // Alternating pages, as two workers' pipelines would read them.
        while true {
            let pageA = try storeA.fetchPending(after: 0, limit: 7)
            let pageB = try storeB.fetchPending(after: 0, limit: 7)
            if pageA.isEmpty && pageB.isEmpty { break }
            seenA += pageA
            seenB += pageB
        }
        let a = Set(seenA.map(\.subscriptionId))
        let b = Set(seenB.map(\.subscriptionId))
        #expect(a.count == seenA.count && b.count == seenB.count, "an item read twice by one worker")
        #expect(a.isDisjoint(with: b))
        #expect(a.union(b) == Set(ids))
        #expect(!a.isEmpty && !b.isEmpty)

        _ = try storeA.write(Self.unchanged(seenA))
        _ = try storeB.write(Self.unchanged(seenB))
        #expect(leaseA.lostResultCount == 0 && leaseB.lostResultCount == 0)
        #expect(try Self.chunks(world, runId: runId).allSatisfy { $0.remaining == 0 })
        #expect(
            try world.connection.count("SELECT count(*) AS n FROM reconciliation_items WHERE status = 'pending'") == 0
        )
        let run = try #require(try world.connection.queryFirst("SELECT done_count FROM reconciliation_runs"))
        #expect(try run.decode("done_count", as: Int.self) == 100)
    }

    @Test func aChunkWhoseLeaseRanOutGoesToTheOtherWorkerWhoseResultIsKept() throws {
        let (world, runId, _) = try Self.world(64)
        try WorkerLease.divide(runId: runId, world.connection)
        let (storeA, leaseA) = try Self.workerStore(world, runId: runId, "a")
        let stalled = try storeA.fetchPending(after: 0, limit: 2)  // the first chunk's two items
        try #require(stalled.count == 2)
        // Worker a stalls past its lease: worker b claims the chunk and reads its items still pending.
        try world.connection.execute("UPDATE run_chunks SET lease_until = now() - interval '1 second'")
        let (storeB, leaseB) = try Self.workerStore(world, runId: runId, "b")
        let taken = try storeB.fetchPending(after: 0, limit: 2)
        #expect(taken.map(\.subscriptionId) == stalled.map(\.subscriptionId))
        _ = try storeB.write(Self.unchanged(taken))
        // Worker a wakes up and writes: nothing of it is kept.
        let late = try storeA.write(
            stalled.map { TestDecisions.decided($0, TestDecisions.decision($0, expiresAt: StoreWorld.day(9))) }
        )
        #expect(late.conflicts.isEmpty)
        #expect(
            late.notWritten == Set(stalled.map(\.subscriptionId)),
            "the pipeline must not count them as worker a's results"
        )
        #expect(leaseA.lostResultCount == 2 && leaseB.lostResultCount == 0)
        for item in stalled {
            let row = try world.subscription(item.subscriptionId)
            #expect(try row.decode("expires_at", as: Date?.self) == StoreWorld.day(1))
        }
        let first = try #require(try Self.chunks(world, runId: runId).first)
        #expect(first.remaining == 0)
        let run = try #require(try world.connection.queryFirst("SELECT done_count FROM reconciliation_runs"))
        #expect(try run.decode("done_count", as: Int.self) == 2)
    }

    @Test func anItemAlreadyWrittenIsNotWrittenAgainWhenItsChunkComesBack() throws {
        let (world, runId, _) = try Self.world(64)
        try WorkerLease.divide(runId: runId, world.connection)
        let (storeA, leaseA) = try Self.workerStore(world, runId: runId, "a")
        let stalled = try storeA.fetchPending(after: 0, limit: 2)
        try #require(stalled.count == 2)
        // Worker b takes the chunk while a stalls, writes one item and dies; the chunk comes back to a.
        try world.connection.execute("UPDATE run_chunks SET lease_until = now() - interval '1 second'")
        let (storeB, _) = try Self.workerStore(world, runId: runId, "b")
        let taken = try storeB.fetchPending(after: 0, limit: 2)
        _ = try storeB.write(Self.unchanged([taken[0]]))
        try world.connection.execute(
            "UPDATE run_chunks SET leased_by = 'a', lease_until = now() + interval '30 seconds' WHERE leased_by = 'b'"
        )
        _ = try storeA.write(Self.unchanged(stalled))
        #expect(leaseA.lostResultCount == 1)
        let first = try #require(try Self.chunks(world, runId: runId).first)
        #expect(first.remaining == 0)
        #expect(try world.connection.count("SELECT count(*) AS n FROM reconciliation_items WHERE status = 'done'") == 2)
        let run = try #require(try world.connection.queryFirst("SELECT done_count FROM reconciliation_runs"))
        #expect(try run.decode("done_count", as: Int.self) == 2)
    }

    /// Four workers claiming at once, while the chunks they hold are written to as batch writes do: every chunk ends
    /// leased to the one worker whose claim returned it (a claim written as `UPDATE ... FROM (SELECT ... FOR UPDATE
    /// SKIP LOCKED LIMIT 1)` could update rows it did not return: one worker held every chunk).
    @Test func concurrentClaimsEachTakeTheChunkTheyReturn() throws {
        let (world, runId, _) = try Self.world(3200)
        try WorkerLease.divide(runId: runId, world.connection)
        try world.connection.execute("ANALYZE run_chunks")
        let chunkCount = try world.connection.count("SELECT count(*) AS n FROM run_chunks")
        let connections = try (0..<4).map { _ in try world.database.connect() }
        defer { for connection in connections { connection.close() } }
        let results = Mutex<[String: [Int64]]>([:])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { index in
            let lease = WorkerLease(workerId: "w\(index)", seconds: 30)
            var mine: [Int64] = []
            do {
                while let range = try lease.claim(runId: runId, excluding: mine, connections[index]) {
                    mine.append(range.lowerBound)
                    // A batch write's bookkeeping on the chunk just claimed.
                    try connections[index].execute(
                        "UPDATE run_chunks SET remaining = remaining WHERE run_id = $1 AND first_id = $2",
                        [runId, range.lowerBound]
                    )
                }
            } catch {
                failures.withLock { $0.append("w\(index): \(error)") }
            }
            results.withLock { $0["w\(index)"] = mine }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        let returned = results.withLock { $0 }
        #expect(returned.values.map(\.count).reduce(0, +) == chunkCount, "\(returned.mapValues(\.count))")
        for (worker, firsts) in returned {
            let leased = try world.connection.query(
                "SELECT first_id FROM run_chunks WHERE leased_by = $1 ORDER BY first_id",
                [worker]
            ).map { try $0.decode("first_id", as: Int64.self) }
            #expect(leased == firsts.sorted(), "\(worker) holds chunks its claims did not return")
        }
    }

    /// The heartbeat renews a worker's leases while the worker's own batch write holds one of its chunks and is about
    /// to lock the others. The renewal never waits for the batch (it renews the chunks the batch does not hold, the
    /// held one at the next heartbeat), and the batch locks its chunks at once: no deadlock, no wait for PostgreSQL's
    /// deadlock detection (1 s). Renewing with a plain `UPDATE`, which locks in the order it scans, deadlocked here.
    @Test func aRenewalBesideTheWorkersOwnBatchWriteNeitherWaitsNorDelaysIt() throws {
        let (world, runId, _) = try Self.world(64)
        try WorkerLease.divide(runId: runId, world.connection)
        let (storeA, leaseA) = try Self.workerStore(world, runId: runId, "a")
        let items = try storeA.fetchPending(after: 0, limit: 6)  // chunks of 2 items: three claimed
        let firsts = try Self.chunks(world, runId: runId).prefix(3).map(\.first)
        try #require(items.count == 6 && firsts.count == 3)
        // The first chunk's row moves behind the other two in the table (any update moves a row), so a sequential
        // scan, the plan for a small table, meets them first.
        try world.connection.execute(
            "UPDATE run_chunks SET remaining = remaining WHERE run_id = $1 AND first_id = $2",
            [runId, firsts[0]]
        )
        try world.connection.execute("UPDATE run_chunks SET lease_until = now() + interval '1 second'")
        let batch = try world.database.connect()
        defer { batch.close() }
        let heartbeat = try world.database.connect()
        defer { heartbeat.close() }
        try heartbeat.execute("SET enable_indexscan = off")
        try heartbeat.execute("SET enable_bitmapscan = off")

        // The batch write has locked the first chunk.
        try batch.execute("BEGIN")
        try batch.execute(
            "SELECT first_id FROM run_chunks WHERE run_id = $1 AND first_id = $2 FOR UPDATE",
            [runId, firsts[0]]
        )
        let renewal = Mutex<String?>(nil)
        let renewed = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            do {
                try leaseA.renew(runId: runId, heartbeat)
                renewal.withLock { $0 = "renewed" }
            } catch {
                renewal.withLock { $0 = "\(error)" }
            }
            renewed.signal()
        }
        // The batch still holds its chunk: a renewal that waited for it would not end before the batch commits.
        try #require(renewed.wait(timeout: .now() + 30) == .success, "the renewal waited for the batch")
        #expect(renewal.withLock { $0 } == "renewed")

        // The renewal is over and holds nothing: the batch locks the rest of its chunks.
        let held = try leaseA.lockHeld(runId: runId, items.map(\.subscriptionId), batch)
        try batch.execute("COMMIT")
        #expect(held == Set(items.map(\.subscriptionId)))
        // The two chunks the batch did not hold were renewed (for 30 s); the held one keeps its lease until the
        // next heartbeat.
        let renewedChunks = try world.connection.query(
            "SELECT first_id FROM run_chunks WHERE leased_by = 'a' AND lease_until > now() + interval '5 seconds'"
        ).map { try $0.decode("first_id", as: Int64.self) }
        #expect(Set(renewedChunks) == Set(firsts.dropFirst()))
        try leaseA.renew(runId: runId, world.connection)
        let live = "SELECT count(*) AS n FROM run_chunks WHERE leased_by = 'a' AND lease_until > now() + interval '5 s'"
        #expect(try world.connection.count(live) == 3)
    }

    /// Items added to the run after its division (a notification pulled while a restarted server had dropped the
    /// prepare lock) are covered: one inside a finished chunk's range opens that chunk again, one beyond every chunk
    /// gets a chunk of its own; a worker then reads both and finishes them.
    @Test func itemsAddedAfterTheDivisionGetAChunk() throws {
        let world = try StoreWorld()
        let ids = try (0..<12).map { try world.insertSubscription("71\($0)", expiresAt: StoreWorld.day(1)) }
        // Every other subscription is due; the division makes chunks of one item (6 items, fewer than 32).
        let runId = try world.createRun(items: ids.enumerated().filter { $0.offset % 2 == 0 }.map(\.element))
        try WorkerLease.divide(runId: runId, world.connection)
        let (store, lease) = try Self.workerStore(world, runId: runId, "a")
        _ = try store.write(Self.unchanged(try store.fetchPending(after: 0, limit: 100)))
        try #require(try Self.chunks(world, runId: runId).allSatisfy { $0.remaining == 0 })
        #expect(try WorkerLease.coverStrays(runId: runId, world.connection) == 0)

        // The first chunk's range made to hold ids[1] too (as a chunk of consecutive due items holds the ids between
        // them); then ids[1] and ids[11] (beyond every chunk) become pending items of the run.
        try world.connection.execute(
            "UPDATE run_chunks SET last_id = $3 WHERE run_id = $1 AND first_id = $2",
            [runId, ids[0], ids[1]]
        )
        try world.connection.execute(
            """
            INSERT INTO reconciliation_items (run_id, subscription_id, original_transaction_id, user_id, previous_state,
                                              previous_expires_at, previous_product_id, previous_auto_renew)
            SELECT $1, id, original_transaction_id, user_id, state, expires_at, product_id, auto_renew
              FROM subscriptions WHERE id = ANY($2::bigint[])
            """,
            [runId, [ids[1], ids[11]].map { Optional($0) }]
        )
        #expect(try WorkerLease.coverStrays(runId: runId, world.connection) == 2)
        #expect(try WorkerLease.coverStrays(runId: runId, world.connection) == 0, "covered once")
        let reopened = try #require(try Self.chunks(world, runId: runId).first { $0.first == ids[0] })
        #expect(reopened.remaining == 1)
        #expect(try Self.chunks(world, runId: runId).contains { $0.first == ids[11] && $0.last == ids[11] })

        let (late, _) = try Self.workerStore(world, runId: runId, "b")
        let items = try late.fetchPending(after: 0, limit: 100)
        #expect(Set(items.map(\.subscriptionId)) == [ids[1], ids[11]])
        _ = try late.write(Self.unchanged(items))
        #expect(try Self.chunks(world, runId: runId).allSatisfy { $0.remaining == 0 })
        let pending = "SELECT count(*) AS n FROM reconciliation_items WHERE status = 'pending'"
        #expect(try world.connection.count(pending) == 0)
        #expect(lease.lostResultCount == 0)
    }

    /// Two workers whose recorded heartbeats are older than the lease (a preparation or a database outage longer than
    /// it): a worker beating counts itself live, so the second to beat takes half the limit, never the whole of it.
    @Test func aWorkerCountsItselfLiveWhenItsLastHeartbeatIsOld() throws {
        let (world, runId, _) = try Self.world(4)
        for worker in ["a", "b"] {
            try world.connection.execute(
                """
                INSERT INTO run_workers (run_id, worker_id, hostname, pid, heartbeat_at)
                VALUES ($1, $2, 'test', 1, now() - interval '1 hour')
                """,
                [runId, worker]
            )
        }
        let settings = WorkerSettings(heartbeatSeconds: 1, leaseSeconds: 300)
        let first = try WorkerCoordination.beat(
            world.connection,
            runId: runId,
            lease: WorkerLease(workerId: "a", seconds: 300),
            settings: settings
        )
        #expect(first.share == 1, "b's heartbeat is an hour old: b counts as gone")
        let second = try WorkerCoordination.beat(
            world.connection,
            runId: runId,
            lease: WorkerLease(workerId: "b", seconds: 300),
            settings: settings
        )
        #expect(second.share == 0.5)
        #expect(second.runStatus == .running)
    }

    /// Two workers finishing one run (the finish lock is a session lock, dropped by a database restart): the first
    /// finishes it; the second finds it no longer running, writes nothing and is told so, so the run is finished,
    /// and its reports written, once.
    @Test func aRunIsFinishedOnceWhenTwoWorkersTryToFinishIt() throws {
        let (world, runId, _) = try Self.world(4)
        try world.connection.execute("UPDATE reconciliation_items SET status = 'done', outcome = 'unchanged'")
        let runner = ReconciliationRunner(
            connectionString: world.database.url,
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        let parameters = RunParameters.workersRun
        var dryRun = parameters
        dryRun.options.dryRun = true  // no trend snapshot: this test is about the run row
        func finish() throws -> ReconciliationRunner.Summary {
            let run = JoinedRun(
                prepared: PreparedRun(id: runId, parameters: dryRun, asOf: StoreWorld.asOf),
                readsNotifications: false,
                ownership: RunOwnership(resumeCount: 0, statsBase: AppleRequestStats())
            )
            let ending = RunRoundsEnding(
                run: run,
                total: ReconciliationPipeline.Result(),
                stopRequested: nil,
                preparation: RunPreparation(due: 4),
                work: world.connection,
                control: world.connection,
                logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
            )
            return try runner.finishRun(ending, stats: AppleRequestStats(), fence: nil)
        }
        #expect(try finish().status == .completed)
        let finishedAt = try world.connection.queryFirst("SELECT finished_at FROM reconciliation_runs")?
            .decode("finished_at", as: Date.self)
        #expect(throws: RunFinishedElsewhereError.self) { try finish() }
        let row = try #require(try world.connection.queryFirst("SELECT status, finished_at FROM reconciliation_runs"))
        #expect(try row.decode("status", as: String.self) == "completed")
        #expect(try row.decode("finished_at", as: Date.self) == finishedAt, "the run row was written again")
    }

    @Test func aChunkLeasedToThisWorkerButNotBeingReadIsClaimedAgain() throws {
        let (world, runId, ids) = try Self.world(10)
        try WorkerLease.divide(runId: runId, world.connection)
        // Every chunk already leased to worker a (its claims' answers lost to a dropped connection, say).
        try world.connection.execute(
            "UPDATE run_chunks SET leased_by = 'a', lease_until = now() + interval '30 seconds'"
        )
        let (storeB, _) = try Self.workerStore(world, runId: runId, "b")
        #expect(try storeB.fetchPending(after: 0, limit: 100).isEmpty)
        let (storeA, _) = try Self.workerStore(world, runId: runId, "a")
        let items = try storeA.fetchPending(after: 0, limit: 100)
        #expect(Set(items.map(\.subscriptionId)) == Set(ids) && items.count == ids.count)
        #expect(try storeA.fetchPending(after: 0, limit: 100).isEmpty)
    }

    @Test func renewAndReleaseTouchOnlyThisWorkersUnfinishedChunks() throws {
        let (world, runId, _) = try Self.world(64)
        try WorkerLease.divide(runId: runId, world.connection)
        let (storeA, leaseA) = try Self.workerStore(world, runId: runId, "a")
        let done = try storeA.fetchPending(after: 0, limit: 2)
        _ = try storeA.write(Self.unchanged(done))
        _ = try storeA.fetchPending(after: 0, limit: 2)
        try world.connection.execute("UPDATE run_chunks SET lease_until = now() - interval '1 second'")
        try leaseA.renew(runId: runId, world.connection)
        let live = "SELECT count(*) AS n FROM run_chunks WHERE leased_by = 'a' AND lease_until > now()"
        #expect(try world.connection.count(live) == 1)
        try leaseA.release(runId: runId, world.connection)
        #expect(try world.connection.count("SELECT count(*) AS n FROM run_chunks WHERE leased_by = 'a'") == 1)
        #expect(try world.connection.count(live) == 0)
    }
}
