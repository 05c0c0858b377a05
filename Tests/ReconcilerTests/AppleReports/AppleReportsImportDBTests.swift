import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

/// `renewal-reconciler apple-reports import` against a real PostgreSQL, through the built binary: files stored whole
/// and once, a bad file named and stored not at all while the others load.
@Suite struct AppleReportsImportDBTests {
    typealias F = AppleReportFixtures

    static let subscriberText = F.subscriberReport([
        F.subscriberRow(),
        F.subscriberRow(),
        F.subscriberRow(price: "-9.99", proceeds: "-6.99", refund: true, units: "-1"),
        F.subscriberRow(price: "10.99", currency: "EUR", proceeds: "7.69", ["Country": "FR"]),
    ])
    static let financialText = F.financialReport([
        F.financialRow(quantity: "10", share: "6.99", extended: "69.90"),
        F.financialRow(quantity: "-1", share: "6.99", extended: "-6.99", saleOrReturn: "R"),
    ])

    func count(_ conn: PostgresConnection, _ table: String) throws -> Int {
        try conn.queryFirst("SELECT count(*) AS n FROM \(table)")?.decode("n", as: Int.self) ?? -1
    }

    @Test func subscriberAndFinancialFilesLoadWithTheirTotalsAndASecondImportLoadsNothing() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let subscriber = try await F.write(Self.subscriberText, "subscriber_20261120.txt", in: world.directory)
        let financial = try await F.write(
            Self.financialText,
            "financial_ZZ_2026-10.txt",
            in: world.directory,
            gzip: true
        )
        let first = await world.runReconciler([
            "apple-reports", "import", subscriber, financial, "--vendor-number", "85012345",
        ])
        #expect(first.status == 0, "\(first)")
        #expect(
            first.stdout.contains("subscriber_20261120.txt: Subscriber report, 2026-11-20: 4 rows imported"),
            "\(first)"
        )
        #expect(first.stdout.contains("(fiscal month 2026-10): 2 rows imported"), "\(first)")

        let conn = try world.connect()
        defer { conn.close() }
        let files = try conn.query(
            "SELECT kind, file_name, compressed, row_count, vendor_number, fiscal_month FROM apple_report_files ORDER BY id"
        )
        #expect(try files.map { try $0.decode("kind", as: String.self) } == ["subscriber", "financial"])
        #expect(try files.map { try $0.decode("compressed", as: Bool.self) } == [false, true])
        #expect(try files.map { try $0.decode("row_count", as: Int.self) } == [4, 2])
        #expect(try files.map { try $0.decode("vendor_number", as: String?.self) } == ["85012345", "85012345"])
        #expect(try files.map { try $0.decode("fiscal_month", as: String?.self) } == [nil, "2026-10"])
        let totals = try conn.query(
            """
            SELECT customer_currency, sum(customer_price_milliunits)::bigint AS price,
                   sum(developer_proceeds_milliunits)::bigint AS proceeds, sum(units)::int AS units,
                   count(*) FILTER (WHERE refund) AS refunds
              FROM apple_subscriber_events GROUP BY customer_currency ORDER BY customer_currency
            """
        )
        #expect(try totals.map { try $0.decode("customer_currency", as: String.self) } == ["EUR", "USD"])
        #expect(try totals.map { try $0.decode("price", as: Int64.self) } == [10990, 9990])
        #expect(try totals.map { try $0.decode("proceeds", as: Int64.self) } == [7690, 6990])
        #expect(try totals.map { try $0.decode("units", as: Int.self) } == [1, 1])
        #expect(try totals.map { try $0.decode("refunds", as: Int.self) } == [0, 1])
        let share = try conn.queryFirst(
            "SELECT sum(extended_partner_share_milliunits)::bigint AS s, sum(quantity)::int AS q FROM apple_financial_rows"
        )
        #expect(try share?.decode("s", as: Int64.self) == 62910)
        #expect(try share?.decode("q", as: Int.self) == 9)

        // Again, and the same Subscriber report compressed under another name: nothing new.
        let packed = try await F.write(Self.subscriberText, "copy.txt", in: world.directory, gzip: true)
        let second = await world.runReconciler(["apple-reports", "import", subscriber, financial, packed])
        #expect(second.status == 0, "\(second)")
        #expect(second.stdout.components(separatedBy: "already imported").count == 4, "\(second)")
        #expect(second.stdout.contains("as subscriber_20261120.txt; nothing loaded"), "\(second)")
        #expect(try count(conn, "apple_report_files") == 2)
        #expect(try count(conn, "apple_subscriber_events") == 4)
        #expect(try count(conn, "apple_financial_rows") == 2)
    }

    @Test func aBadRowNamesFileLineAndColumnAndStoresNothingOfThatFileWhileTheOthersLoad() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let bad = F.subscriberReport([
            F.subscriberRow(), F.subscriberRow(), F.subscriberRow(["Event Date": "2026-11-31"]), F.subscriberRow(),
        ])
        let badFile = try await F.write(bad, "bad_subscriber.txt", in: world.directory, gzip: true)
        let goodFile = try await F.write(Self.financialText, "financial.txt", in: world.directory)
        let outcome = await world.runReconciler(["apple-reports", "import", badFile, goodFile])
        #expect(outcome.status == 64, "\(outcome)")
        #expect(
            outcome.stderr.contains("bad_subscriber.txt.gz: line 4: Event Date: \"2026-11-31\" is not a date"),
            "\(outcome)"
        )
        #expect(outcome.stderr.contains("nothing of \(badFile) was loaded"), "\(outcome)")
        #expect(outcome.stdout.contains("financial.txt: Financial report (consolidated)"), "\(outcome)")
        let conn = try world.connect()
        defer { conn.close() }
        #expect(try count(conn, "apple_subscriber_events") == 0)
        #expect(
            try conn.query("SELECT kind FROM apple_report_files").map { try $0.decode("kind", as: String.self) } == [
                "financial"
            ]
        )
        #expect(try count(conn, "apple_financial_rows") == 2)

        // Fixed, the same file then loads.
        let fixed = try await F.write(Self.subscriberText, "bad_subscriber.txt", in: world.directory, gzip: true)
        let again = await world.runReconciler(["apple-reports", "import", fixed])
        #expect(again.status == 0, "\(again)")
        #expect(try count(conn, "apple_subscriber_events") == 4)
    }

    @Test func aFileOfAnotherReportIsRefusedAndNamed() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let sales = "Provider\tProvider Country\tSKU\tDeveloper\tTitle\tVersion\tUnits\nAPPLE\tUS\tpro\tEx\tPro\t1\t3\n"
        let file = try await F.write(sales, "S_D_85012345_20261120.txt", in: world.directory)
        let outcome = await world.runReconciler(["apple-reports", "import", file])
        #expect(outcome.status == 64, "\(outcome)")
        #expect(outcome.stderr.contains("S_D_85012345_20261120.txt: line 1: the header (Provider,"), "\(outcome)")
        #expect(outcome.stderr.contains("Subscriber report"), "\(outcome)")
        let conn = try world.connect()
        defer { conn.close() }
        #expect(try count(conn, "apple_report_files") == 0)
    }

    @Test func aDetailedFinancialReportIsStoredWithItsSettlementDatesAndRefundsAndNamedTwiceLoadsOnce() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let header = [
            "Transaction Date", "Settlement Date", "Apple Identifier", "SKU", "Title", "Developer Name",
            "Product Type Identifier", "Country of Sale", "Quantity", "Partner Share", "Extended Partner Share",
            "Partner Share Currency", "Customer Price", "Customer Currency", "Sale or Return", "Promo Code",
            "Order Type", "Region",
        ]
        func row(_ date: String, _ quantity: String, _ extended: String, _ saleOrReturn: String) -> String {
            [
                date, "10/30/2026", "6400000001", "com.example.renewals.pro", "Pro Monthly", "Example", "IAY", "JP",
                quantity, "700", extended, "JPY", "1000", "JPY", saleOrReturn, "", "", "Japan",
            ].joined(separator: "\t")
        }
        let text = [
            "Vendor Name\tExample Inc", "Start Date\t09/27/2026", "End Date\t10/31/2026",
            header.joined(separator: "\t"), row("10/02/2026", "2", "1400", "S"), row("10/09/2026", "-1", "-700", "R"),
        ].joined(separator: "\n")
        let file = try await F.write(text, "finance_detail_Z1_2026-10.txt", in: world.directory, gzip: true)
        let outcome = await world.runReconciler(["apple-reports", "import", file, file])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.stdout.contains("Financial report (detailed), 2026-09-27 to 2026-10-31"), "\(outcome)")
        #expect(outcome.stdout.contains("2 rows imported"), "\(outcome)")
        #expect(outcome.stdout.contains("already imported"), "\(outcome)")
        let conn = try world.connect()
        defer { conn.close() }
        let rows = try conn.query(
            """
            SELECT to_char(transaction_date, 'YYYY-MM-DD') AS day, to_char(settlement_date, 'YYYY-MM-DD') AS settled,
                   sale_or_return, quantity, extended_partner_share_milliunits AS share
              FROM apple_finance_detail_rows ORDER BY line
            """
        )
        #expect(try rows.map { try $0.decode("day", as: String.self) } == ["2026-10-02", "2026-10-09"])
        #expect(try rows.map { try $0.decode("settled", as: String.self) } == ["2026-10-30", "2026-10-30"])
        #expect(try rows.map { try $0.decode("sale_or_return", as: String.self) } == ["S", "R"])
        #expect(try rows.map { try $0.decode("quantity", as: Int.self) } == [2, -1])
        #expect(try rows.map { try $0.decode("share", as: Int64.self) } == [1_400_000, -700_000])
        #expect(try count(conn, "apple_report_files") == 1)
    }
}
