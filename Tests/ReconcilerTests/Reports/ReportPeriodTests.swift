import CivilTime
import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

/// The period of a run's report (docs/reports.md, "The period"), on a real PostgreSQL: money and transaction
/// counts by purchase or refund date within the period, what a first run finds dated earlier shown apart as
/// history found, and a transaction dated after a run's as-of counted in the next run's period, once.
@Suite struct ReportPeriodTests {
    static func at(_ text: String) -> Date { RFC3339.parse(text) ?? .distantPast }

    /// A fresh database with every migration and nightly runs (id, as-of, status).
    static func prepare(runs: [(Int64, String, String, Bool)]) throws -> (TestDatabase, PostgresConnection) {
        let database = try TestDatabase.make()
        let connection = try database.connect()
        let sqlDirectory = EndToEndFixture.packageRoot.appendingPathComponent("sql").path
        for file in try MigrationDirectory(path: sqlDirectory).files() {
            try connection.executeScript(try String(contentsOfFile: file.path, encoding: .utf8))
        }
        for (id, asOf, status, dryRun) in runs {
            try connection.execute(
                """
                INSERT INTO reconciliation_runs (id, mode, dry_run, status, as_of, started_at, finished_at, exit_code)
                VALUES ($1, 'nightly', $2, $3, $4, $4, $4::timestamptz + interval '5 minutes', 0)
                """,
                [id, dryRun, status, at(asOf)]
            )
        }
        return (database, connection)
    }

    static func insert(
        _ connection: PostgresConnection,
        id: String,
        kind: String = "renewal",
        purchased: String,
        price: Int64,
        currency: String = "USD",
        firstSeen: Int64,
        refunded: String? = nil,
        refundSeen: Int64? = nil,
        revocationType: String? = nil,
        percentage: Int64? = nil
    ) throws {
        try connection.execute(
            """
            INSERT INTO subscription_transactions (transaction_id, original_transaction_id, product_id, kind,
                purchase_date, expires_date, first_seen_run_id, refund_seen_run_id, price_milliunits, currency,
                storefront, cancellation_date, revocation_date, revocation_type, revocation_percentage,
                signed_transaction)
            VALUES ($1, $1 || '-o', 'pro.monthly', $2, $3, $3::timestamptz + interval '30 days', $4, $5, $6, $7,
                    'USA', $8, $8, $9, $10, 'eyJ.signed.jws')
            """,
            [
                id, kind, at(purchased), firstSeen, refundSeen, price, currency, refunded.map(at), revocationType,
                percentage,
            ]
        )
    }

    static func summary(_ connection: PostgresConnection, run: Int64) throws -> RunSummary {
        try ReportGenerator(connection: connection).summary(runId: run).summary
    }

    @Test func aFirstRunCountsOnlyItsCalendarDayAndShowsTheRestAsHistoryFound() throws {
        let (database, connection) = try Self.prepare(runs: [(1, "2024-05-01T03:00:00Z", "completed", false)])
        defer {
            connection.close()
            database.drop()
        }
        // Purchased in the period (after midnight UTC): last night's revenue.
        try Self.insert(connection, id: "A", purchased: "2024-05-01T01:00:00Z", price: 9990, firstSeen: 1)
        // Purchased before it: history found, the first reconciliation's discovery.
        try Self.insert(connection, id: "B", purchased: "2024-04-20T10:00:00Z", price: 9990, firstSeen: 1)
        // Purchased before, refunded 45% in the period: history found gross, the period's refund (4.4955 -> 4.50).
        try Self.insert(
            connection,
            id: "C",
            kind: "refund",
            purchased: "2024-04-15T10:00:00Z",
            price: 9990,
            firstSeen: 1,
            refunded: "2024-05-01T02:00:00Z",
            refundSeen: 1,
            revocationType: "REFUND_PRORATED",
            percentage: 45000
        )
        // JPY, bought and refunded in full before the period: all history found.
        try Self.insert(
            connection,
            id: "D",
            kind: "refund",
            purchased: "2024-04-30T23:59:59Z",
            price: 1_500_000,
            currency: "JPY",
            firstSeen: 1,
            refunded: "2024-05-01T00:00:00Z",
            refundSeen: 1,
            revocationType: "REFUND_FULL",
            percentage: 100000
        )
        let s = try Self.summary(connection, run: 1)
        #expect(
            s.period
                == ReportPeriod(
                    start: Self.at("2024-05-01T00:00:00Z"),
                    end: Self.at("2024-05-01T03:00:00Z"),
                    previousRunId: nil
                )
        )
        let usd = try #require(s.money.byCurrency.currencies["USD"]?.totals)
        #expect(usd.paidTransactions == 1)
        #expect(usd.grossMilliunits == 9990)
        #expect(usd.proratedRefunds == 1 && usd.proratedRefundedMilliunits == 4500)
        #expect(usd.fullRefunds == 0)
        #expect(usd.net == "5.49")
        #expect(s.money.byCurrency.currencies["JPY"] == nil)
        let historyUSD = try #require(s.money.historyFound.currencies["USD"]?.totals)
        #expect(historyUSD.paidTransactions == 2 && historyUSD.gross == "19.98" && historyUSD.refunds == 0)
        let historyJPY = try #require(s.money.historyFound.currencies["JPY"]?.totals)
        #expect(historyJPY.gross == "1500" && historyJPY.refundedFull == "1500" && historyJPY.net == "0")
        #expect(s.transactions.firstSeenByKind["renewal"] == 1)
        #expect(s.transactions.historyFoundByKind?["renewal"] == 1)
        #expect(s.transactions.historyFoundByKind?["refund"] == 2)
        #expect(s.transactions.refundsSeen == 1)
        #expect(s.transactions.refundsHistoryFound == 1)

        // The files say the same: money.csv's scope column, transactions.csv's, report.html's sections.
        let directory = try ReportTempDirectory()
        let folder = try ReportGenerator(connection: connection).generate(runId: 1, reportDirectory: directory.path)
        let money = try String(contentsOf: folder.appendingPathComponent("money.csv"), encoding: .utf8)
        let moneyRows = money.split(separator: "\r\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false)
        }
        #expect(moneyRows.first?.last == "scope")
        #expect(moneyRows.contains { $0.first == "USD" && $0[4] == "9.99" && $0.last == "period" })
        #expect(moneyRows.contains { $0.first == "USD" && $0[4] == "19.98" && $0.last == "history_found" })
        #expect(moneyRows.contains { $0.first == "JPY" && $0[4] == "1500" && $0.last == "history_found" })
        #expect(!moneyRows.contains { $0.first == "JPY" && $0.last == "period" })
        let transactions = try String(contentsOf: folder.appendingPathComponent("transactions.csv"), encoding: .utf8)
        #expect(transactions.contains("purchase_counted_in,refund_counted_in\r\n"))
        #expect(transactions.contains("A,A-o,pro.monthly,2024-05-01T01:00:00Z"))
        #expect(
            transactions.split(separator: "\r\n").contains {
                $0.hasPrefix("C,") && $0.hasSuffix(",history_found,period")
            }
        )
        let html = try String(contentsOf: folder.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(html.contains("id=\"money-history-found\""))
        #expect(html.contains("Period: after 2024-05-01T00:00:00Z up to and including 2024-05-01T03:00:00Z"))
    }

    @Test func theNextRunsPeriodStartsAtThePreviousCompletedRunAndCountsEachTransactionOnce() throws {
        let (database, connection) = try Self.prepare(runs: [
            (1, "2024-05-01T03:00:00Z", "completed", false),
            (2, "2024-05-01T20:00:00Z", "failed", false),  // not completed: does not start a period
            (3, "2024-05-01T21:00:00Z", "completed", true),  // a dry run: neither
            (4, "2024-05-02T03:00:00Z", "completed", false),
        ])
        defer {
            connection.close()
            database.drop()
        }
        // Bought after run 1's as-of but answered to run 1: the next period's, not run 1's.
        try Self.insert(connection, id: "E", purchased: "2024-05-01T03:00:01Z", price: 9990, firstSeen: 1)
        // Bought at run 1's as-of exactly: run 1's (the period includes its end).
        try Self.insert(connection, id: "F", purchased: "2024-05-01T03:00:00Z", price: 2990, firstSeen: 1)
        // Seen by the failed run 2, bought in run 4's period: run 4's.
        try Self.insert(
            connection,
            id: "G",
            purchased: "2024-05-01T12:00:00Z",
            price: 1_500_000,
            currency: "JPY",
            firstSeen: 2
        )
        // Found by run 4 but bought in run 1's period: history found in run 4, never its revenue.
        try Self.insert(connection, id: "H", purchased: "2024-05-01T02:00:00Z", price: 9990, firstSeen: 4)
        // Refunded during run 4's period, bought long before and first seen by run 1.
        try Self.insert(
            connection,
            id: "K",
            kind: "refund",
            purchased: "2024-04-10T00:00:00Z",
            price: 9990,
            firstSeen: 1,
            refunded: "2024-05-01T10:00:00Z",
            refundSeen: 4,
            revocationType: "REFUND_FULL",
            percentage: 100000
        )

        let first = try Self.summary(connection, run: 1)
        #expect(first.money.byCurrency.currencies["USD"]?.totals.grossMilliunits == 2990)
        #expect(first.money.historyFound.currencies["USD"]?.totals.grossMilliunits == 9990)  // K's purchase

        let fourth = try Self.summary(connection, run: 4)
        #expect(fourth.period?.previousRunId == 1)
        #expect(fourth.period?.start == "2024-05-01T03:00:00Z")
        #expect(fourth.period?.rule == "since_previous_run")
        let usd = try #require(fourth.money.byCurrency.currencies["USD"]?.totals)
        #expect(usd.paidTransactions == 1 && usd.grossMilliunits == 9990)  // E only
        #expect(usd.fullRefunds == 1 && usd.fullRefundedMilliunits == 9990)  // K
        #expect(fourth.money.byCurrency.currencies["JPY"]?.totals.gross == "1500")  // G
        #expect(fourth.money.historyFound.currencies["USD"]?.totals.grossMilliunits == 9990)  // H
        #expect(fourth.money.historyFound.currencies["USD"]?.totals.paidTransactions == 1)

        // Across the runs every paid purchase is counted exactly once (period or history found).
        var gross: [String: Int64] = [:]
        for run: Int64 in [1, 4] {
            let s = try Self.summary(connection, run: run)
            for money in [s.money.byCurrency, s.money.historyFound] {
                for (code, c) in money.currencies { gross[code, default: 0] += c.totals.grossMilliunits }
            }
        }
        #expect(gross == ["USD": 9990 + 2990 + 9990 + 9990, "JPY": 1_500_000])
    }

    @Test func aStoredPeriodIsReadAsStored() throws {
        let (database, connection) = try Self.prepare(runs: [(1, "2024-05-01T03:00:00Z", "completed", false)])
        defer {
            connection.close()
            database.drop()
        }
        // A run row written before migration 009's columns were filled keeps the rule when read; one with the
        // columns set is read as stored, even when later runs change what the rule would give.
        try connection.execute(
            "UPDATE reconciliation_runs SET period_start = '2024-04-30T12:00:00Z', period_previous_run_id = NULL WHERE id = 1"
        )
        try Self.insert(connection, id: "A", purchased: "2024-04-30T13:00:00Z", price: 9990, firstSeen: 1)
        let s = try Self.summary(connection, run: 1)
        #expect(s.period?.start == "2024-04-30T12:00:00Z")
        #expect(s.money.byCurrency.currencies["USD"]?.totals.grossMilliunits == 9990)
    }
}
