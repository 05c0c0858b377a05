import Foundation
import Postgres

/// One worker's hold on the items it works on (docs/architecture.md, "Workers"): a worker run's pending items are
/// divided into chunks of consecutive subscription ids (`run_chunks`, sql/014_run_chunks.sql); a worker claims a
/// whole chunk with `FOR UPDATE SKIP LOCKED`, leased to it until `now() + seconds`. Every batch it writes first
/// locks its results' chunks and keeps only the results of chunks still leased to it, and in the end takes the
/// items it moved from pending to done off their chunks' `remaining` (a chunk with nothing remaining is finished). The heartbeat renews the leases of its unfinished chunks; a worker that dies loses them
/// when they run out, and another one claims them and reads their items still pending.
///
/// Claims come from the pipeline's read queue and batch writes from its write queue: the chunks claimed are
/// guarded by a lock.
public final class WorkerLease: @unchecked Sendable {
    /// `hostname:pid:random`, unique per worker process.
    public let workerId: String
    /// How long a claimed chunk stays this worker's without a heartbeat.
    public let seconds: Double
    private let lock = NSLock()
    private var lost = 0
    /// The chunks this worker claimed, `(first, last)` ids, sorted by `first` (they never overlap).
    private var chunks: [(first: Int64, last: Int64)] = []

    /// The most items in one chunk, and the fewest chunks a run is divided into when it has enough items: small
    /// enough that the workers share the last items of a run, large enough that a lease costs little per item.
    static let largestChunk = 200
    static let chunksPerRun = 32

    public init(workerId: String, seconds: Double) {
        self.workerId = workerId
        self.seconds = seconds
    }

    /// Divides the run's pending items into chunks, once: called when its scan is complete, under the run's
    /// prepare lock, so only the first worker there divides; later calls change nothing. Returns the number of
    /// chunks made (0 when the run already had them).
    @discardableResult
    static func divide(runId: Int64, _ conn: PostgresConnection) throws -> Int {
        try conn.transaction { db in
            let existing = try db.queryFirst("SELECT count(*) AS n FROM run_chunks WHERE run_id = $1", [runId])
            guard try existing?.decode("n", as: Int.self) ?? 0 == 0 else { return 0 }
            let pending =
                try db.queryFirst(
                    "SELECT count(*) AS n FROM reconciliation_items WHERE run_id = $1 AND status = 'pending'",
                    [runId]
                )?
                .decode("n", as: Int.self) ?? 0
            let size = max(1, min(largestChunk, (pending + chunksPerRun - 1) / chunksPerRun))
            return try db.query(
                """
                INSERT INTO run_chunks (run_id, first_id, last_id, remaining)
                SELECT $1, min(subscription_id), max(subscription_id), count(*)
                  FROM (SELECT subscription_id, (row_number() OVER (ORDER BY subscription_id) - 1) / $2 AS chunk
                          FROM reconciliation_items WHERE run_id = $1 AND status = 'pending') AS numbered
                 GROUP BY chunk
                RETURNING first_id
                """,
                [runId, Int64(size)]
            ).count
        }
    }

    /// Claims the lowest unfinished chunk of the run that nobody holds (never leased, or its lease ran out) or that
    /// this worker holds already but is not reading now (`excluding`: a claim whose answer was lost to a dropped
    /// connection, or a chunk of an earlier round), skipping chunks other workers are claiming or writing this
    /// instant. Returns its ids, nil when none is free.
    ///
    /// The free chunk is a scalar subquery, run once. As a join (`UPDATE ... FROM (SELECT ... FOR UPDATE SKIP
    /// LOCKED LIMIT 1)`) a generic plan, which PostgreSQL picks for a statement prepared and run often, may scan
    /// the subquery again for every row, skip the rows this statement just updated and so claim every chunk.
    func claim(runId: Int64, excluding: [Int64], _ conn: PostgresConnection) throws -> ClosedRange<Int64>? {
        guard
            let row = try conn.queryFirst(
                """
                UPDATE run_chunks SET leased_by = $2, lease_until = now() + make_interval(secs => $3)
                 WHERE run_id = $1
                   AND first_id = (SELECT first_id FROM run_chunks
                                    WHERE run_id = $1 AND remaining > 0
                                      AND (lease_until IS NULL OR lease_until < now() OR leased_by = $2)
                                      AND first_id <> ALL($4::bigint[])
                                    ORDER BY first_id LIMIT 1
                                    FOR UPDATE SKIP LOCKED)
                RETURNING first_id, last_id
                """,
                [runId, workerId, seconds, excluding.map { Optional($0) }]
            )
        else { return nil }
        let first: Int64 = try row.decode("first_id")
        let last: Int64 = try row.decode("last_id")
        lock.withLock {
            if !chunks.contains(where: { $0.first == first }) {
                chunks.insert((first, last), at: chunks.firstIndex { $0.first > first } ?? chunks.endIndex)
            }
        }
        return first...last
    }

    /// Inside a batch's transaction, before anything is written: locks the chunks of `ids` still leased to this
    /// worker (so no other worker claims them until the batch commits) and returns the ids whose chunk it holds.
    /// The others' results must not be written: their chunk went to another worker, which writes them.
    func lockHeld(runId: Int64, _ ids: [Int64], _ conn: PostgresConnection) throws -> Set<Int64> {
        let perChunk = grouped(ids)
        guard !perChunk.isEmpty else { return [] }
        let held = try conn.query(
            """
            SELECT first_id FROM run_chunks
             WHERE run_id = $1 AND first_id = ANY($3::bigint[]) AND leased_by = $2
             ORDER BY first_id
             FOR UPDATE
            """,
            [runId, workerId, perChunk.keys.sorted().map { Optional($0) }]
        ).map { try $0.decode("first_id", as: Int64.self) }
        return Set(held.flatMap { perChunk[$0] ?? [] })
    }

    /// Inside the same transaction, after the items were written: takes the items that went from pending to done
    /// off their chunks' `remaining`.
    func finished(runId: Int64, _ ids: [Int64], _ conn: PostgresConnection) throws {
        let perChunk = grouped(ids)
        guard !perChunk.isEmpty else { return }
        let firsts = perChunk.keys.sorted()
        try conn.execute(
            """
            UPDATE run_chunks AS c SET remaining = greatest(0, c.remaining - v.n)
              FROM unnest($2::bigint[], $3::int[]) AS v(first_id, n)
             WHERE c.run_id = $1 AND c.first_id = v.first_id
            """,
            [runId, firsts.map { Optional($0) }, firsts.map { Optional(Int32(perChunk[$0]?.count ?? 0)) }]
        )
    }

    /// Gives a chunk to the run's pending items that no unfinished chunk covers, and returns how many there were.
    /// The division covers every item of a complete scan, and the creator holds the prepare lock until it has
    /// pulled notifications (which can add items); but a server restart drops that lock, and an item added after
    /// the division would then never be claimed and the run never complete. A finished chunk whose range holds such
    /// items is opened again (their count remaining, nobody's lease); an item outside every chunk gets a chunk of
    /// its own. Several workers may call this at once: a chunk is opened once, an item's chunk made once.
    @discardableResult
    static func coverStrays(runId: Int64, _ conn: PostgresConnection) throws -> Int {
        try conn.transaction { db in
            // Chunks never overlap: the one that can hold an item is the last to start at or before it.
            let strays = try db.query(
                """
                SELECT i.subscription_id AS id, c.first_id AS chunk
                  FROM reconciliation_items i
                  LEFT JOIN LATERAL (SELECT first_id, last_id, remaining FROM run_chunks
                                      WHERE run_id = $1 AND first_id <= i.subscription_id
                                      ORDER BY first_id DESC LIMIT 1) AS c ON i.subscription_id <= c.last_id
                 WHERE i.run_id = $1 AND i.status = 'pending' AND (c.first_id IS NULL OR c.remaining = 0)
                """,
                [runId]
            ).map { (id: try $0.decode("id", as: Int64.self), chunk: try $0.decode("chunk", as: Int64?.self)) }
            guard !strays.isEmpty else { return 0 }
            let outside = strays.filter { $0.chunk == nil }.map { Optional($0.id) }
            let perChunk = Dictionary(strays.compactMap { $0.chunk.map { ($0, 1) } }, uniquingKeysWith: +)
            let firsts = perChunk.keys.sorted()
            try db.execute(
                """
                INSERT INTO run_chunks (run_id, first_id, last_id, remaining)
                SELECT $1, id, id, 1 FROM unnest($2::bigint[]) AS id
                ON CONFLICT (run_id, first_id) DO NOTHING
                """,
                [runId, outside]
            )
            try db.execute(
                """
                UPDATE run_chunks AS c SET remaining = v.n, leased_by = NULL, lease_until = NULL
                  FROM unnest($2::bigint[], $3::int[]) AS v(first_id, n)
                 WHERE c.run_id = $1 AND c.first_id = v.first_id AND c.remaining = 0
                """,
                [runId, firsts.map { Optional($0) }, firsts.map { Optional(Int32(clamping: perChunk[$0] ?? 0)) }]
            )
            return strays.count
        }
    }

    /// `ids` by the first id of the claimed chunk holding them (ids of no claimed chunk are left out).
    private func grouped(_ ids: [Int64]) -> [Int64: [Int64]] {
        lock.withLock {
            var perChunk: [Int64: [Int64]] = [:]
            for id in ids {
                if let chunk = chunkIndex(of: id) { perChunk[chunks[chunk].first, default: []].append(id) }
            }
            return perChunk
        }
    }

    /// The index in `chunks` of the chunk holding `id` (caller holds `lock`).
    private func chunkIndex(of id: Int64) -> Int? {
        var low = 0
        var high = chunks.count
        while low < high {
            let mid = (low + high) / 2
            if chunks[mid].first <= id { low = mid + 1 } else { high = mid }
        }
        guard low > 0, id <= chunks[low - 1].last else { return nil }
        return low - 1
    }

    /// Extends the leases of this worker's unfinished chunks (the heartbeat), but for those its own batch write
    /// holds this instant: the heartbeat never waits for a batch (which may itself wait for an app's lock on a
    /// subscription row), so the worker's heartbeat stays current; those chunks are renewed at the next heartbeat,
    /// and while the batch holds them no other worker can claim them.
    func renew(runId: Int64, _ conn: PostgresConnection) throws {
        try conn.transaction { db in
            let mine = try lockUnfinished(runId: runId, skippingLocked: true, db)
            guard !mine.isEmpty else { return }
            try db.execute(
                """
                UPDATE run_chunks SET lease_until = now() + make_interval(secs => $3)
                 WHERE run_id = $1 AND first_id = ANY($2::bigint[])
                """,
                [runId, mine.map { Optional($0) }, seconds]
            )
        }
    }

    /// Gives back this worker's unfinished chunks at once (a graceful stop): another worker need not wait for the
    /// leases to run out.
    func release(runId: Int64, _ conn: PostgresConnection) throws {
        try conn.transaction { db in
            let mine = try lockUnfinished(runId: runId, skippingLocked: false, db)
            guard !mine.isEmpty else { return }
            try db.execute(
                "UPDATE run_chunks SET leased_by = NULL, lease_until = NULL WHERE run_id = $1 AND first_id = ANY($2::bigint[])",
                [runId, mine.map { Optional($0) }]
            )
        }
    }

    /// Inside a transaction: locks this worker's unfinished chunks in `first_id` order, the order a batch write
    /// locks its chunks in (`lockHeld`), and returns their first ids (with `skippingLocked`, only those no other
    /// transaction holds). Locking them in the order a plain `UPDATE` happens to scan them could deadlock with the
    /// worker's own batch write: PostgreSQL finds that after its `deadlock_timeout` (1 s), during which the batch
    /// waits, then aborts one of the two.
    private func lockUnfinished(runId: Int64, skippingLocked: Bool, _ db: PostgresConnection) throws -> [Int64] {
        try db.query(
            """
            SELECT first_id FROM run_chunks
             WHERE run_id = $1 AND leased_by = $2 AND remaining > 0
             ORDER BY first_id
             FOR UPDATE\(skippingLocked ? " SKIP LOCKED" : "")
            """,
            [runId, workerId]
        ).map { try $0.decode("first_id", as: Int64.self) }
    }

    /// Records this worker's requests to Apple so far with a batch (docs/architecture.md, "Requests counted with
    /// each batch"): never fewer than recorded (the heartbeat records them too).
    func recordStats(runId: Int64, _ stats: AppleRequestStats, _ conn: PostgresConnection) throws {
        try conn.execute(
            """
            UPDATE run_workers
               SET apple_stats = CASE WHEN ($3::jsonb->>'requests')::bigint >= COALESCE((apple_stats->>'requests')::bigint, 0)
                                      THEN $3::jsonb ELSE apple_stats END
             WHERE run_id = $1 AND worker_id = $2
            """,
            [runId, workerId, stats.jsonString()]
        )
    }

    func lostResults(_ count: Int) {
        lock.withLock { lost += count }
    }

    /// Results not written because their chunk's lease had gone to another worker.
    public var lostResultCount: Int {
        lock.withLock { lost }
    }
}
