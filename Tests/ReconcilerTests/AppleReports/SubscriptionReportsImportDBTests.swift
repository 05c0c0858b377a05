import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

/// `apple-reports import` of Subscription Event and Subscription reports against a real PostgreSQL, through the
/// built binary: stored whole, once a file and once a day, a bad file or a dateless Subscription report stored not at
/// all (docs/apple-reports.md).
@Suite struct SubscriptionReportsImportDBTests {
    typealias S = SubscriptionReportFixtures

    static let eventText = S.report(
        S.eventColumns,
        [
            S.eventRow("Renew", quantity: "3"), S.eventRow("Subscribe", quantity: "2"),
            S.eventRow("Cancel", quantity: "1", ["Cancellation Reason": "Billing Issue"]),
        ]
    )
    static let subscriptionText = S.report(
        S.subscriptionColumns,
        [
            S.subscriptionRow(active: "12", subscribers: "12"),
            S.subscriptionRow(active: "0", subscribers: "2", ["Billing Retry": "1", "Grace Period": "1"]),
        ]
    )

    func scalar(_ conn: PostgresConnection, _ sql: String) throws -> Int {
        try conn.queryFirst(sql)?.decode("n", as: Int?.self) ?? -1
    }

    @Test func bothReportsLoadOnceAFileAndOnceADay() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let events = try await S.write(Self.eventText, "Subscription_Event_85012345_20261120.txt", world.directory)
        let counts = try await S.write(Self.subscriptionText, "Subscription_85012345_20261120.txt", world.directory)
        let first = await world.runReconciler(["apple-reports", "import", events, counts])
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout.contains("Subscription Event report, 2026-11-20: 3 rows imported"), "\(first)")
        #expect(first.stdout.contains("Subscription report, 2026-11-20: 2 rows imported"), "\(first)")
        let conn = try world.connect()
        defer { conn.close() }
        #expect(try scalar(conn, "SELECT sum(quantity)::int AS n FROM apple_subscription_event_rows") == 6)
        #expect(try scalar(conn, "SELECT sum(active_standard_price)::int AS n FROM apple_subscription_rows") == 12)
        #expect(
            try scalar(conn, "SELECT sum(billing_retry + grace_period)::int AS n FROM apple_subscription_rows") == 2
        )
        #expect(try scalar(conn, "SELECT count(free_trial_win_back)::int AS n FROM apple_subscription_rows") == 0)
        #expect(
            try scalar(
                conn,
                "SELECT count(*)::int AS n FROM apple_report_files WHERE period_start = '2026-11-20' AND fiscal_month IS NULL"
            ) == 2
        )

        // The same files again, the Subscription report renamed with --date, and another file of the same day.
        let renamed = try await S.write(Self.subscriptionText, "counts.txt", world.directory, gzip: true)
        let other = try await S.write(
            S.report(S.subscriptionColumns, [S.subscriptionRow(active: "13", subscribers: "13")]),
            "another.txt",
            world.directory
        )
        let second = await world.runReconciler([
            "apple-reports", "import", events, counts, renamed, other, "--date", "2026-11-20",
        ])
        #expect(second.status == 0, "\(second)")
        #expect(second.stdout.components(separatedBy: "nothing loaded").count == 5, "\(second)")
        #expect(try scalar(conn, "SELECT count(*)::int AS n FROM apple_report_files") == 2)
        #expect(try scalar(conn, "SELECT count(*)::int AS n FROM apple_subscription_rows") == 2)
    }

    @Test func aBadRowOrAMissingDayStoresNothingOfThatFile() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let bad = S.report(S.eventColumns, [S.eventRow(), S.eventRow(), S.eventRow("Renew", ["Country": "usa"])])
        let badFile = try await S.write(bad, "events.txt", world.directory, gzip: true)
        let dateless = try await S.write(Self.subscriptionText, "counts.txt", world.directory)
        let outcome = await world.runReconciler(["apple-reports", "import", badFile, dateless])
        #expect(outcome.status == 64, "\(outcome)")
        #expect(outcome.stderr.contains("events.txt.gz: line 4: Country: \"usa\" is not"), "\(outcome)")
        #expect(outcome.stderr.contains("counts.txt: is a Subscription report, which has no date column"), "\(outcome)")
        #expect(outcome.stderr.contains("--date YYYY-MM-DD"), "\(outcome)")
        let conn = try world.connect()
        defer { conn.close() }
        #expect(try scalar(conn, "SELECT count(*)::int AS n FROM apple_report_files") == 0)
        #expect(try scalar(conn, "SELECT count(*)::int AS n FROM apple_subscription_event_rows") == 0)

        let dated = await world.runReconciler(["apple-reports", "import", dateless, "--date", "2026-11-19"])
        #expect(dated.status == 0, "\(dated)")
        #expect(dated.stdout.contains("Subscription report, 2026-11-19: 2 rows imported"), "\(dated)")
    }
}
