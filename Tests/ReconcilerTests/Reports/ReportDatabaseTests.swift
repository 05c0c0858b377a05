import Foundation
import Postgres
import TestSupport
import Testing

@testable import Reconciler

/// Reports built from a real PostgreSQL: a run with every outcome, ledger rows, a partial price catalog
/// and a dry run, inserted with plain SQL, then generated and compared with the database.
@Suite struct ReportDatabaseTests {
    static let receiptMarker = "MIITtgYJKoZIhvcNAQcCoIITpzCCE6MCAQExCzAJBgUrDgMCGgUAMIIDVwYJKoZIhvcNAQcBRECEIPTSECRET"
    static let secretMarker = "a1b2c3d4e5f6sharedsecret0099887766"

    /// A fresh database with sql/*.sql applied and the sample runs inserted; returns (database, connection).
    static func prepare() throws -> (TestDatabase, PostgresConnection) {
        let database = try TestDatabase.make()
        let connection = try database.connect()
        let sqlDirectory = EndToEndFixture.packageRoot.appendingPathComponent("sql").path
        for file in try MigrationDirectory(path: sqlDirectory).files() {
            try connection.executeScript(try String(contentsOfFile: file.path, encoding: .utf8))
        }
        try insert(ReportSampleData.data(runId: 42), earlierRunId: 41, connection: connection)
        return (database, connection)
    }

    static func insertRun(_ run: ReportRun, connection: PostgresConnection) throws {
        let stats = run.appleStats.jsonString()
        try connection.execute(
            """
            INSERT INTO reconciliation_runs (id, mode, dry_run, status, as_of, parameters, started_at, finished_at,
                due_count, done_count, unresolved_count, apple_stats, exit_code)
            VALUES ($1, $2, $3, $4, $5, jsonb_build_object('note', $6::text), $7, $8, $9, $10, $11, $12::jsonb, $13)
            """,
            [
                run.id, run.mode, run.dryRun, run.status, run.asOf, "password=\(secretMarker)", run.startedAt,
                run.finishedAt, run.dueCount, run.doneCount, run.unresolvedCount, stats, run.exitCode,
            ]
        )
    }

    static func insert(_ data: ReportData, earlierRunId: Int64, connection: PostgresConnection) throws {
        var earlier = data.run
        earlier.id = earlierRunId
        // Three days earlier: run 42's period (docs/reports.md, "The period") is after it, so the sample's
        // transactions first seen in run 42 (bought up to a day before its as-of) are in that period.
        earlier.asOf = earlier.asOf.addingTimeInterval(-3 * 86_400)
        try insertRun(earlier, connection: connection)
        try insertRun(data.run, connection: connection)
        for item in data.items {
            try connection.execute(
                """
                INSERT INTO subscriptions (id, user_id, product_id, original_transaction_id, latest_receipt)
                VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING
                """,
                [
                    item.subscriptionId, item.userId ?? "u", item.previousProductId ?? "p", item.originalTransactionId,
                    receiptMarker,
                ]
            )
            try connection.execute(
                """
                INSERT INTO reconciliation_items (run_id, subscription_id, original_transaction_id, status, outcome,
                    user_id, previous_state, new_state, previous_expires_at, new_expires_at, previous_product_id,
                    product_id, subscription_group_id, auto_renew, previous_auto_renew, auto_renew_product_id,
                    environment, apple_status, attempts, reason, expiry_moved_backwards)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
                        $21)
                """,
                [
                    data.run.id, item.subscriptionId, item.originalTransactionId, item.status.rawValue, item.outcome,
                    item.userId, item.previousState, item.newState, item.previousExpiresAt, item.newExpiresAt,
                    item.previousProductId, item.productId, item.subscriptionGroupId, item.autoRenew,
                    item.previousAutoRenew, item.autoRenewProductId, item.environment, item.appleStatus,
                    item.attempts, item.reason, item.expiryMovedBackwards,
                ]
            )
        }
        for t in data.transactions {
            try insertLedger(
                t,
                firstSeen: t.firstSeenInRun ? data.run.id : earlierRunId,
                refundSeen: t.refundSeenInRun ? data.run.id : nil,
                connection: connection
            )
        }
        // History from the earlier run: the trial before 1000001's renewal, the intro offer before
        // 1000004's, the trial 1000003 lapsed on, and a renewal that must not appear in run 42's report.
        let d = ReportSampleData.date
        let history = [
            ReportTransaction(
                transactionId: "1900001",
                originalTransactionId: "1000001",
                productId: "pro.monthly",
                kind: "initial",
                purchaseDate: d(-8, ReportSampleData.asOf),
                expiresDate: d(-1, ReportSampleData.asOf),
                isTrial: true
            ),
            ReportTransaction(
                transactionId: "1900004",
                originalTransactionId: "1000004",
                productId: "pro.monthly",
                kind: "initial",
                purchaseDate: d(-35, ReportSampleData.asOf),
                expiresDate: d(-5, ReportSampleData.asOf),
                isIntroOffer: true
            ),
            ReportTransaction(
                transactionId: "1900003",
                originalTransactionId: "1000003",
                productId: "pro.yearly",
                kind: "initial",
                purchaseDate: d(-9, ReportSampleData.asOf),
                expiresDate: d(-2, ReportSampleData.asOf),
                isTrial: true
            ),
            ReportTransaction(
                transactionId: "1900002",
                originalTransactionId: "1000002",
                productId: "pro.monthly",
                kind: "renewal",
                purchaseDate: d(-20, ReportSampleData.asOf),
                expiresDate: d(10, ReportSampleData.asOf)
            ),
        ]
        for t in history { try insertLedger(t, firstSeen: earlierRunId, refundSeen: nil, connection: connection) }
        for price in data.prices {
            try connection.execute(
                "INSERT INTO products (product_id, currency, price, period) VALUES ($1, $2, $3, $4)",
                [price.productId, price.currency, price.price, price.period]
            )
        }
    }

    static func insertLedger(
        _ t: ReportTransaction,
        firstSeen: Int64,
        refundSeen: Int64?,
        connection: PostgresConnection
    ) throws {
        try connection.execute(
            """
            INSERT INTO subscription_transactions (transaction_id, original_transaction_id, product_id,
                subscription_group_id, kind, purchase_date, expires_date, is_trial, is_intro_offer, offer,
                cancellation_date, cancellation_reason, first_seen_run_id, refund_seen_run_id)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
            """,
            [
                t.transactionId, t.originalTransactionId, t.productId, t.subscriptionGroupId, t.kind, t.purchaseDate,
                t.expiresDate, t.isTrial, t.isIntroOffer, t.offer, t.cancellationDate, t.cancellationReason, firstSeen,
                refundSeen,
            ]
        )
    }

    static func count(_ connection: PostgresConnection, _ sql: String) throws -> Int {
        try #require(try connection.queryFirst(sql)).decode(0, as: Int.self)
    }

    @Test func loadedDataMatchesWhatWasInserted() throws {
        let (database, connection) = try Self.prepare()
        defer {
            connection.close()
            database.drop()
        }
        let loaded = try ReportLoader(connection: connection).load(runId: 42)
        var expected = ReportSampleData.data(runId: 42)
        // The period the loader computes for a run from before migration 009's columns were set: since run 41.
        expected.run.periodStart = ReportSampleData.date(-3)
        expected.run.periodPreviousRunId = 41
        expected.run.periodScanFromRunId = 41
        #expect(loaded.run == expected.run)
        #expect(loaded.items.count == expected.items.count)
        #expect(Set(loaded.transactions.map(\.transactionId)) == Set(expected.transactions.map(\.transactionId)))
        // Same derived numbers from the database as from the in-memory scenario (trial/intro history included).
        #expect(RunSummary(data: loaded) == RunSummary(data: expected))
    }

    @Test func summaryCountsEqualDatabaseAndCSVCounts() throws {
        let (database, connection) = try Self.prepare()
        defer {
            connection.close()
            database.drop()
        }
        let directory = try ReportTempDirectory()
        let folder = try ReportGenerator(connection: connection).generate(runId: 42, reportDirectory: directory.path)
        #expect(folder.lastPathComponent == "2024-05-01_run-42")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: folder.path)) == Set(ReportFiles.names))

        let summaryData = try Data(contentsOf: folder.appendingPathComponent("summary.json"))
        let summary = try JSONDecoder().decode(RunSummary.self, from: summaryData)
        let changes = try CSVTestReader.read(folder.appendingPathComponent("changes.csv"))
        let transactions = try CSVTestReader.read(folder.appendingPathComponent("transactions.csv"))
        let errors = try CSVTestReader.read(folder.appendingPathComponent("errors.csv"))
        #expect(changes.header == ReportTables.changeColumns)
        #expect(transactions.header == ReportTables.transactionColumns)
        #expect(errors.header == ReportTables.errorColumns)

        let c = connection
        #expect(
            summary.counts.selected
                == (try Self.count(c, "SELECT count(*) FROM reconciliation_items WHERE run_id = 42"))
        )
        #expect(
            summary.counts.done
                == (try Self.count(c, "SELECT count(*) FROM reconciliation_items WHERE run_id = 42 AND status = 'done'"))
        )
        #expect(summary.counts.due == (try Self.count(c, "SELECT due_count FROM reconciliation_runs WHERE id = 42")))
        for outcome in ReportOutcome.all {
            let inDatabase = try Self.count(
                c,
                "SELECT count(*) FROM reconciliation_items WHERE run_id = 42 AND outcome = '\(outcome)'"
            )
            #expect(summary.byOutcome[outcome] == inDatabase, "outcome \(outcome)")
        }
        let changedInDatabase = try Self.count(
            c,
            """
            SELECT count(*) FROM reconciliation_items WHERE run_id = 42 AND status = 'done'
               AND outcome NOT IN ('unresolved', 'rejected', 'conflict')
               AND (previous_state IS DISTINCT FROM new_state OR previous_expires_at IS DISTINCT FROM new_expires_at
                    OR previous_product_id IS DISTINCT FROM product_id OR previous_auto_renew IS DISTINCT FROM auto_renew)
            """
        )
        #expect(summary.counts.changed == changedInDatabase)
        #expect(changes.rows.count == changedInDatabase)
        let errorsInDatabase = try Self.count(
            c,
            "SELECT count(*) FROM reconciliation_items WHERE run_id = 42 AND outcome IN ('unresolved', 'rejected', 'conflict')"
        )
        #expect(summary.counts.errors == errorsInDatabase)
        #expect(errors.rows.count == errorsInDatabase)
        let transactionsInDatabase = try Self.count(
            c,
            "SELECT count(*) FROM subscription_transactions WHERE first_seen_run_id = 42 OR refund_seen_run_id = 42"
        )
        #expect(summary.transactions.total == transactionsInDatabase)
        #expect(transactions.rows.count == transactionsInDatabase)
        #expect(
            summary.transactions.refundsSeen
                == (try Self.count(c, "SELECT count(*) FROM subscription_transactions WHERE refund_seen_run_id = 42"))
        )
        #expect(
            summary.counts.unresolved
                == (try Self.count(
                    c,
                    "SELECT count(*) FROM reconciliation_items WHERE run_id = 42 AND outcome = 'unresolved'"
                ))
        )
        // Backwards expiry moves: counted, flagged with their reason in changes.csv, listed in report.html.
        let backwardsInDatabase = try Self.count(
            c,
            """
            SELECT count(*) FROM reconciliation_items WHERE run_id = 42 AND status = 'done' AND expiry_moved_backwards
               AND outcome NOT IN ('unresolved', 'rejected', 'conflict')
            """
        )
        #expect(backwardsInDatabase == 2)
        #expect(summary.counts.expiryMovedBackwards == backwardsInDatabase)
        let flag = try #require(changes.header.firstIndex(of: "expiry_moved_backwards"))
        let reasonColumn = try #require(changes.header.firstIndex(of: "reason"))
        let flagged = changes.rows.filter { $0[flag] == "true" }
        #expect(flagged.count == backwardsInDatabase)
        #expect(flagged.first { $0[0] == "1000005" }?[reasonColumn] == ReportSampleData.backwardsRefundReason)
        #expect(changes.rows.first { $0[0] == "1000001" }?[flag] == "false")

        // Hostile user ids stay text: neutralised in CSV, escaped in HTML.
        let hostileRow = try #require(changes.rows.first { $0[0] == "1000001" })
        #expect(hostileRow[1] == "'" + ReportSampleData.hostileUserId)
        #expect(errors.rows.first { $0[0] == "1000008" }?[1] == "'@u8")
        #expect(errors.rows.first { $0[0] == "1000008" }?[6] == "21002 after 5 attempts, \"try again\", later")
        // RFC 3339 UTC dates.
        #expect(hostileRow[6] == "2024-05-30T00:00:00Z")
        let html = try String(contentsOf: folder.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(html.contains("<h2>Expiry moved backwards (2)</h2>"))
        #expect(!html.contains(ReportSampleData.htmlUserId))
        for id in ReportHTML.chartIds { #expect(html.contains("id=\"\(id)\"")) }
        #expect(summary.money.renewalRevenue.first?.amount == "99.97")
        #expect(summary.money.productsWithoutPrice == ["team.monthly"])

        // For scripts/check-reports (Chromium + LibreOffice): keep a copy of this report when asked.
        if let keep = ProcessInfo.processInfo.environment["REPORT_SAMPLE_DIR"], !keep.isEmpty {
            try ReportGenerator(connection: connection).generate(runId: 42, reportDirectory: keep)
        }
    }

    @Test func reportsAndMetricsNeverContainReceiptsOrSecrets() throws {
        let (database, connection) = try Self.prepare()
        defer {
            connection.close()
            database.drop()
        }
        let directory = try ReportTempDirectory()
        let folder = try ReportGenerator(connection: connection).generate(runId: 42, reportDirectory: directory.path)
        let metrics = directory.path + "/metrics.prom"
        try ReportGenerator(connection: connection).writeMetrics(runId: 42, metricsFile: metrics)
        var paths = ReportFiles.names.map { folder.appendingPathComponent($0).path }
        paths.append(metrics)
        for path in paths {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(!text.isEmpty)
            #expect(!text.contains(String(Self.receiptMarker.prefix(24))), "receipt in \(path)")
            #expect(!text.contains(Self.secretMarker), "secret in \(path)")
        }
    }

    @Test func dryRunListsItsDryRunTransactionsAndCarriesTheBanner() throws {
        let (database, connection) = try Self.prepare()
        defer {
            connection.close()
            database.drop()
        }
        var dry = ReportSampleData.data(runId: 43, dryRun: true)
        dry.run.asOf = dry.run.asOf.addingTimeInterval(86_400)
        try Self.insertRun(dry.run, connection: connection)
        try connection.execute(
            """
            INSERT INTO reconciliation_items (run_id, subscription_id, original_transaction_id, status, outcome,
                previous_state, new_state, previous_expires_at, new_expires_at, product_id, previous_product_id)
            VALUES (43, 1, '1000001', 'done', 'renewed', 'active', 'active', $1, $2, 'pro.monthly', 'pro.monthly')
            """,
            [ReportSampleData.date(29), ReportSampleData.date(59)]
        )
        try connection.execute(
            """
            INSERT INTO dry_run_transactions (run_id, transaction_id, original_transaction_id, product_id, kind,
                purchase_date, expires_date)
            VALUES (43, '2100001', '1000001', 'pro.monthly', 'renewal', $1, $2),
                   (43, '2000001', '1000001', 'pro.monthly', 'refund', $3, $1)
            """,
            // Bought in the dry run's period (after run 42's as-of, up to its own).
            [ReportSampleData.date(0.5), ReportSampleData.date(30.5), ReportSampleData.date(-1)]
        )
        let directory = try ReportTempDirectory()
        let folder = try ReportGenerator(connection: connection).generate(runId: 43, reportDirectory: directory.path)
        #expect(folder.lastPathComponent == "2024-05-02_run-43")
        let transactions = try CSVTestReader.read(folder.appendingPathComponent("transactions.csv"))
        #expect(transactions.rows.map { $0[0] }.sorted() == ["2000001", "2100001"])
        let summary = try JSONDecoder().decode(
            RunSummary.self,
            from: try Data(contentsOf: folder.appendingPathComponent("summary.json"))
        )
        #expect(summary.dryRun)
        #expect(summary.transactions.refundsSeen == 1)
        #expect(summary.money.renewalRevenue.first?.amount == "9.99")
        #expect(summary.money.refunded.first?.amount == "9.99")
        let html = try String(contentsOf: folder.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(html.contains("id=\"dry-run-banner\""))
    }

    @Test func regenerationReplacesTheFolderAndRunListingShowsRuns() throws {
        let (database, connection) = try Self.prepare()
        defer {
            connection.close()
            database.drop()
        }
        let directory = try ReportTempDirectory()
        let generator = ReportGenerator(connection: connection)
        let first = try generator.generate(runId: 42, reportDirectory: directory.path)
        try connection.execute(
            "UPDATE reconciliation_items SET reason = 'regenerated' WHERE run_id = 42 AND outcome = 'conflict'"
        )
        let second = try generator.generate(runId: 42, reportDirectory: directory.path)
        #expect(first == second)
        let errors = try CSVTestReader.read(second.appendingPathComponent("errors.csv"))
        #expect(errors.rows.contains { $0.last == "regenerated" })
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["2024-05-01_run-42"])

        let error = #expect(throws: ReportError.self) {
            try generator.generate(runId: 999, reportDirectory: directory.path)
        }
        #expect(error?.code == .runNotFound)

        let rows = try RunListing(connection: connection).recent(limit: 10)
        #expect(rows.map(\.id) == [42, 41])
        #expect(rows[0].outcomes["lapsed"] == 2)
        #expect(rows[0].outcomes["pending"] == 1)
        let table = RunListing.format(rows)
        #expect(table.split(separator: "\n").count == 3)
        #expect(table.contains("completed"))
    }
}

/// A minimal RFC 4180 reader for checking the reports' CSV files.
enum CSVTestReader {
    struct Table {
        var header: [String]
        var rows: [[String]]
    }

    static func read(_ url: URL) throws -> Table {
        let text = try String(contentsOf: url, encoding: .utf8)
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var quoted = false
        var iterator = Array(text.unicodeScalars).makeIterator()
        var pending: Unicode.Scalar? = nil
        while let scalar = pending ?? iterator.next() {
            pending = nil
            if quoted {
                if scalar == "\"" {
                    if let next = iterator.next() {
                        if next == "\"" {
                            field.unicodeScalars.append("\"")
                        } else {
                            quoted = false
                            pending = next
                        }
                    } else {
                        quoted = false
                    }
                } else {
                    field.unicodeScalars.append(scalar)
                }
            } else if scalar == "\"" {
                quoted = true
            } else if scalar == "," {
                record.append(field)
                field = ""
            } else if scalar == "\r" {
                continue
            } else if scalar == "\n" {
                record.append(field)
                field = ""
                records.append(record)
                record = []
            } else {
                field.unicodeScalars.append(scalar)
            }
        }
        if !field.isEmpty || !record.isEmpty {
            record.append(field)
            records.append(record)
        }
        guard let header = records.first else { return Table(header: [], rows: []) }
        return Table(header: header, rows: Array(records.dropFirst()))
    }
}

/// The streamed report (rows written straight from PostgreSQL, counts folded row by row) is byte for
/// byte the report rendered from the whole run loaded in memory.
@Suite struct ReportStreamingTests {
    static func files(_ folder: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in ReportFiles.names { files[name] = try Data(contentsOf: folder.appendingPathComponent(name)) }
        return files
    }

    @Test(arguments: [false, true]) func streamedFolderEqualsInMemoryRendering(dryRun: Bool) throws {
        let (database, connection) = try ReportDatabaseTests.prepare()
        defer {
            connection.close()
            database.drop()
        }
        var runId: Int64 = 42
        if dryRun {
            runId = 43
            var dry = ReportSampleData.data(runId: 43, dryRun: true)
            dry.run.asOf = dry.run.asOf.addingTimeInterval(86_400)
            try ReportDatabaseTests.insertRun(dry.run, connection: connection)
            try connection.execute(
                """
                INSERT INTO dry_run_transactions (run_id, transaction_id, original_transaction_id, product_id, kind,
                    purchase_date, expires_date, is_trial)
                VALUES (43, '2100001', '1000001', 'pro.monthly', 'renewal', $1, $2, false),
                       (43, '2000001', '1000001', 'pro.monthly', 'refund', $3, $1, false),
                       (43, '2100002', '1000002', 'pro.monthly', 'renewal', NULL, $2, true)
                """,
                [ReportSampleData.date(29), ReportSampleData.date(59), ReportSampleData.date(-1)]
            )
        }
        // More change rows than report.html shows, so the page's "first 200 of N" path is compared too.
        try connection.execute(
            """
            INSERT INTO reconciliation_items (run_id, subscription_id, original_transaction_id, status, outcome,
                previous_state, new_state, product_id, user_id)
            SELECT $1, 500000 + g, (3000000 + g)::text, 'done', 'lapsed', 'active', 'expired', 'pro.monthly',
                   CASE WHEN g % 7 = 0 THEN '=cmd' || g ELSE 'u' || g END
              FROM generate_series(1, 250) g
            """,
            [runId]
        )
        let loaded = try ReportLoader(connection: connection).load(runId: runId)
        #expect(loaded.items.count > ReportHTML.tableRowLimit)
        let expected = Dictionary(uniqueKeysWithValues: try ReportFiles.render(loaded).map { ($0.name, $0.data) })

        let directory = try ReportTempDirectory()
        let metrics = directory.path + "/metrics.prom"
        let folder = try ReportGenerator(connection: connection).generate(
            runId: runId,
            reportDirectory: directory.path,
            metricsFile: metrics
        )
        let streamed = try Self.files(folder)
        #expect(Set(streamed.keys) == Set(expected.keys))
        for name in ReportFiles.names {
            #expect(streamed[name] == expected[name], "\(name) differs from the in-memory rendering")
        }
        let html = String(decoding: try #require(streamed["report.html"]), as: UTF8.self)
        #expect(html.contains("Showing the first \(ReportHTML.tableRowLimit) of"))
        let metricsText = try String(contentsOfFile: metrics, encoding: .utf8)
        let expectedMetrics = MetricsFile.render(
            run: loaded.run,
            summary: RunSummary(data: loaded),
            previousLastSuccess: nil
        )
        #expect(metricsText == expectedMetrics)
        #expect(try ReportGenerator(connection: connection).summary(runId: runId).summary == RunSummary(data: loaded))
        // Nothing temporary left behind.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
                == ["metrics.prom", folder.lastPathComponent].sorted()
        )
    }

    @Test func metricsAreWrittenEvenWhenTheFolderCannotBe() throws {
        let (database, connection) = try ReportDatabaseTests.prepare()
        defer {
            connection.close()
            database.drop()
        }
        let directory = try ReportTempDirectory()
        let blocker = directory.path + "/not-a-dir"
        try Data("x".utf8).write(to: URL(fileURLWithPath: blocker))
        let metrics = directory.path + "/metrics.prom"
        let error = #expect(throws: ReportError.self) {
            try ReportGenerator(connection: connection).generate(
                runId: 42,
                reportDirectory: blocker,
                metricsFile: metrics
            )
        }
        #expect(error?.description.contains(blocker) == true)
        #expect(try String(contentsOfFile: metrics, encoding: .utf8).contains("renewal_reconciler_last_run_id 42"))
    }
}
