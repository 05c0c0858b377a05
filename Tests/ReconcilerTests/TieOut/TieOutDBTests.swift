import Foundation
import Postgres
import Reconciler
import TestSupport
import Testing

/// `renewal-reconciler tie-out` through the built binary against a real PostgreSQL: a ledger and imported report files
/// with planted differences, each attributed to its cause and nothing else unexplained; the three files written, the
/// CSV parsing and adding up to the JSON's totals (docs/tie-out.md).
@Suite struct TieOutDBTests {
    typealias F = AppleReportFixtures

    static let product = "com.example.renewals.pro"  // the fixtures' Vendor Identifier, Apple ID 6400000001

    /// A ledger row (Server API: signed price, storefront).
    static func ledger(
        _ conn: PostgresConnection,
        _ id: String,
        _ purchased: String,
        original: String? = nil,
        price: Int64 = 9990,
        currency: String = "USD",
        storefront: String = "USA",
        family: Bool = false,
        refunded: String? = nil
    ) throws {
        try conn.execute(
            """
            INSERT INTO subscription_transactions (transaction_id, original_transaction_id, product_id, kind,
                   purchase_date, expires_date, price_milliunits, currency, storefront, ownership_type,
                   revocation_date, revocation_type, environment)
            VALUES ($1, $2, $3, 'renewal', $4::timestamptz, $4::timestamptz + interval '1 month', $5, $6, $7, $8,
                    $9::timestamptz,
                    CASE WHEN $9::text IS NOT NULL THEN 'REFUND_FULL' END, 'Production')
            """,
            [
                id, original ?? id, product, purchased, price, currency, storefront,
                family ? "FAMILY_SHARED" : "PURCHASED", refunded,
            ]
        )
    }

    /// A Subscriber report row of the product on `day`.
    static func subscriber(
        _ day: String,
        price: String = "9.99",
        currency: String = "USD",
        proceeds: String = "6.99",
        country: String = "US",
        subscriber: String = "7000000001",
        refundOf purchase: String? = nil,
        reason: String = ""
    ) -> String {
        F.subscriberRow(
            price: purchase == nil ? price : "-" + price,
            currency: currency,
            proceeds: purchase == nil ? proceeds : "-" + proceeds,
            refund: purchase != nil,
            units: purchase == nil ? "1" : "-1",
            [
                "Event Date": day, "Country": country, "Subscriber ID": subscriber, "Purchase Date": purchase ?? "",
                "Proceeds Reason": reason,
            ]
        )
    }

    /// A consolidated Financial report row of fiscal November 2026 (1 to 28 November).
    static func financial(
        _ quantity: String,
        _ share: String,
        _ extended: String,
        _ saleOrReturn: String = "S",
        currency: String = "USD",
        country: String = "US"
    ) -> String {
        F.financialRow(
            quantity: quantity,
            share: share,
            extended: extended,
            saleOrReturn: saleOrReturn,
            currency: currency,
            country: country
        )
        .replacingOccurrences(of: "09/27/2026", with: "11/01/2026")
        .replacingOccurrences(of: "10/31/2026", with: "11/28/2026")
    }

    /// The planted world of fiscal November 2026; returns the tie-out's output folder.
    static func plant(_ world: EndToEndFixture) async throws -> String {
        let conn = try world.connect()
        defer { conn.close() }
        try ledger(conn, "t-match", "2026-11-05T18:00:00Z")
        try ledger(conn, "t-ledger-only", "2026-11-07T22:00:00Z")  // Apple never reported it
        try ledger(conn, "t-family", "2026-11-08T18:00:00Z", family: true)  // a family member's access
        // Paid since February in the ledger (first year: 30%), but Apple counts an earlier year: 85%.
        try ledger(conn, "t-year2-first", "2026-02-01T18:00:00Z", original: "t-year2")
        try ledger(conn, "t-year2", "2026-11-09T18:00:00Z")
        // Bought in fiscal October, refunded on 10 November; Apple books the refund on the 13th.
        try ledger(conn, "t-refund", "2026-10-15T18:00:00Z", refunded: "2026-11-10T18:00:00Z")
        // 23:30 PST on 14 November; Apple books it on the 15th.
        try ledger(conn, "t-timing", "2026-11-15T07:30:00Z")
        try ledger(conn, "t-gb", "2026-11-16T12:00:00Z", currency: "GBP", storefront: "GBR")
        // Refunded on 4 November, the refund reversed by Apple on the 6th: the ledger holds it unrefunded.
        try ledger(conn, "t-reversed", "2026-11-02T18:00:00Z")
        try conn.execute(
            """
            INSERT INTO app_store_notifications (notification_uuid, notification_type, environment, transaction_id,
                   original_transaction_id, signed_date, signed_payload, source, subscription_known)
            VALUES ('00000000-0000-4000-8000-000000000001', 'REFUND_REVERSED', 'Production', 't-reversed',
                    't-reversed', '2026-11-06T12:00:00Z', 'x.y.z', 'import', false)
            """
        )
        // Never compared: a one-time purchase (no expiry; refunded, so of kind refund), a Sandbox purchase, and the
        // cancellation date an upgrade gives the transaction it replaced (no refund).
        try conn.execute(
            """
            INSERT INTO subscription_transactions (transaction_id, original_transaction_id, product_id, kind,
                   purchase_date, price_milliunits, currency, storefront, revocation_date, revocation_type)
            VALUES ('t-coins', 't-coins', 'coins.100', 'refund', '2026-11-11T18:00:00Z', 990, 'USD', 'USA',
                    '2026-11-12T18:00:00Z', 'REFUND_FULL')
            """
        )
        try ledger(conn, "t-sandbox", "2026-11-12T18:00:00Z")
        try conn.execute(
            "UPDATE subscription_transactions SET environment = 'Sandbox' WHERE transaction_id = 't-sandbox'"
        )
        try ledger(conn, "t-upgraded", "2026-10-20T18:00:00Z")
        try conn.execute(
            """
            UPDATE subscription_transactions SET is_upgraded = true, cancellation_date = '2026-11-12T18:00:00Z'
             WHERE transaction_id = 't-upgraded'
            """
        )
        // The catalog names the product's Apple ID (products import, apple_id).
        let catalog = world.directory.appendingPathComponent("prices.csv").path
        try Data(
            """
            product_id,currency,price,period,apple_id
            \(product),USD,9.99,P1M,6400000001
            \(product),GBP,9.99,P1M,6400000001

            """.utf8
        ).write(to: URL(fileURLWithPath: catalog))
        let products = await world.runReconciler(["products", "import", catalog])
        #expect(products.status == 0, "\(products)")
        #expect(
            try conn.queryFirst("SELECT count(*) AS n FROM products WHERE apple_id = '6400000001'")?.decode(
                "n",
                as: Int.self
            )
                == 2
        )

        let subscriber = F.subscriberReport([
            subscriber("2026-11-02"), subscriber("2026-11-04", refundOf: "2026-11-02"),
            subscriber("2026-11-05"),
            subscriber("2026-11-06", subscriber: "7000000099"),  // a lost order
            subscriber("2026-11-09", proceeds: "8.49", reason: "Rate After One Year"),
            subscriber("2026-11-13", refundOf: "2026-10-15"),
            subscriber("2026-11-15"),
            subscriber("2026-11-16", currency: "GBP", proceeds: "5.83", country: "GB"),
            subscriber("2026-11-29", price: "0", proceeds: "0"),  // free trials: not money; the file covers the month
            subscriber("2026-10-31", price: "0", proceeds: "0"),  // and the day before and after it
        ])
        let financialText = F.financialReport([
            financial("4", "6.99", "27.96"), financial("1", "8.49", "8.49"), financial("-2", "6.99", "-13.98", "R"),
            financial("1", "5.83", "5.83", currency: "GBP", country: "GB"),
        ])
        let files = [
            try await F.write(subscriber, "subscriber_november.txt", in: world.directory),
            try await F.write(financialText, "financial_2026-11.txt", in: world.directory, gzip: true),
        ]
        let imported = await world.runReconciler(["apple-reports", "import"] + files)
        #expect(imported.status == 0, "\(imported)")
        return world.directory.appendingPathComponent("tieout").path
    }

    static func json(_ path: String) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
    }

    @Test func everyPlantedDifferenceHasItsCauseAndNothingElseIsUnexplained() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let out = try await Self.plant(world)
        let run = await world.runReconciler(["tie-out", "--fiscal-month", "2026-11", "--out", out])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("tie-out 2026-11 (fiscal month, 2026-11-01 to 2026-11-28)"), "\(run)")
        #expect(run.stdout.contains("unexplained: 1 lost order(s) (Apple only), 1 ledger-only event(s)"), "\(run)")
        #expect(run.stdout.contains("\(out)/tieout.html"), "\(run)")

        let json = try Self.json("\(out)/tieout.json")
        let rows = try #require(json["rows"] as? [[String: Any]])
        func differences(_ view: String, _ measure: String) -> [String: [String: Int64]] {
            var out: [String: [String: Int64]] = [:]
            for row in rows where row["view"] as? String == view && row["measure"] as? String == measure {
                guard let difference = row["difference_milliunits"] as? Int64, difference != 0 else { continue }
                out[row["cause"] as? String ?? "?", default: [:]][row["day_or_month"] as? String ?? "?"] = difference
            }
            return out
        }
        #expect(
            differences("daily", "customer_price") == [
                "unexplained": ["2026-11-06": -9990, "2026-11-07": 9990],
                "family_sharing": ["2026-11-08": 9990],
                "refund_other_period": ["2026-11-10": -9990, "2026-11-13": 9990],
                "timing": ["2026-11-14": 9990, "2026-11-15": -9990],
                "refund_reversed": ["2026-11-04": 9990],
            ]
        )
        let proceeds = differences("daily", "proceeds")
        #expect(proceeds["commission_tier"] == ["2026-11-09": -1500])
        #expect(proceeds["tax"] == ["2026-11-16": 1160])
        #expect(proceeds["unexplained"] == ["2026-11-06": -6990, "2026-11-07": 6990])
        #expect(
            Set(proceeds.keys) == [
                "commission_tier", "tax", "unexplained", "family_sharing", "refund_other_period", "timing",
                "refund_reversed",
            ]
        )

        let unexplained = try #require(json["unexplained"] as? [String: Any])
        let lost = try #require(unexplained["apple_only"] as? [[String: Any]])
        #expect(lost.count == 1)
        #expect(lost.first?["subscriber_id"] as? String == "7000000099")
        #expect(lost.first?["day"] as? String == "2026-11-06")
        #expect(lost.first?["product_id"] as? String == Self.product)
        #expect(lost.first?["customer_price"] as? String == "9.99")
        #expect(lost.first?["file"] as? String == "subscriber_november.txt")
        #expect(lost.first?["line"] as? Int == 5)
        let ledgerOnly = try #require(unexplained["ledger_only"] as? [[String: Any]])
        #expect(ledgerOnly.map { $0["transaction_id"] as? String } == ["t-ledger-only"])

        // The monthly view: the Financial report agrees with the Subscriber report, so its differences are the
        // ledger's (the lost order and the ledger-only sale net out in one key).
        let monthly = differences("monthly", "partner_share")
        #expect(monthly["commission_tier"] == ["2026-11": -1500])
        #expect(monthly["family_sharing"] == ["2026-11": 6990])
        #expect(monthly["tax"] == ["2026-11": 1160])
        #expect(monthly["refund_reversed"] == ["2026-11": 6990])
        #expect(monthly["unexplained"] == nil)
        let period = try #require(json["period"] as? [String: Any])
        #expect(period["fiscal_months_compared"] as? [String] == ["2026-11"])
        // Every day of the month and the days around it have a Subscriber report, and the Apple ID came from the
        // catalog; only the detailed Financial report is missing.
        #expect(
            (json["notes"] as? [String]) == [
                "no detailed Financial report imported for fiscal month 2026-11: what it settled of earlier months' "
                    + "sales is not known (read as unexplained)"
            ]
        )
    }

    @Test func theCommandWritesThreeFilesWhoseCSVAddsUpToTheJSONsTotalsAndRefusesBadArguments() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let out = try await Self.plant(world)
        let run = await world.runReconciler(["tie-out", "--from", "2026-11-01", "--to", "2026-11-28", "--out", out])
        #expect(run.status == 0, "\(run)")
        for name in ["tieout.csv", "tieout.json", "tieout.html"] {
            #expect(FileManager.default.fileExists(atPath: "\(out)/\(name)"), "\(name)")
        }
        let html = try String(contentsOfFile: "\(out)/tieout.html", encoding: .utf8)
        #expect(html.contains("<svg id=\"chart-tieout-causes\""))
        #expect(html.contains("<svg id=\"chart-tieout-days-USD\""))
        #expect(html.contains("7000000099"))

        let records = try DemoReportTests.csvRecords(String(contentsOfFile: "\(out)/tieout.csv", encoding: .utf8))
        let header = try #require(records.first)
        #expect(header.first == "period" && header.contains("cause") && header.contains("difference"))
        let body = records.dropFirst()
        #expect(body.allSatisfy { $0.count == header.count })
        #expect(body.allSatisfy { $0.first == "2026-11-01..2026-11-28" })
        func column(_ name: String) -> Int { header.firstIndex(of: name) ?? -1 }
        /// An amount of the CSV (`-9.99`, JPY `1500`) in milliunits.
        func milliunits(_ text: String) -> Int64 { F.milliunits(text) }

        let json = try Self.json("\(out)/tieout.json")
        let totals = try #require(json["totals"] as? [[String: Any]])
        #expect(!totals.isEmpty)
        for total in totals {
            let view = total["view"] as? String
            let measure = total["measure"] as? String
            let currency = total["currency"] as? String
            let appleCurrency = total["apple_currency"] as? String
            let mine = body.filter {
                $0[column("view")] == view && $0[column("measure")] == measure && $0[column("currency")] == currency
                    && $0[column("apple_currency")] == appleCurrency
            }
            #expect(!mine.isEmpty)
            let ledger = mine.map { milliunits($0[column("ledger_amount")]) }.reduce(0, +)
            let apple = mine.map { milliunits($0[column("apple_amount")]) }.reduce(0, +)
            #expect(ledger == total["ledger_amount_milliunits"] as? Int64, "\(total)")
            #expect(apple == total["apple_amount_milliunits"] as? Int64, "\(total)")
            if let difference = total["difference_milliunits"] as? Int64 {
                #expect(mine.map { milliunits($0[column("difference")]) }.reduce(0, +) == difference, "\(total)")
                #expect(difference == ledger - apple, "\(total)")
            }
        }
        // A date range's days hold no fiscal month's Financial comparison unless the month is wholly inside: here it
        // is (1 to 28 November).
        #expect((json["period"] as? [String: Any])?["fiscal_months_compared"] as? [String] == ["2026-11"])

        // Another app's tie-out: none of this ledger is its, nor are Apple's rows of this ledger's products.
        let other = world.directory.appendingPathComponent("other").path
        let otherApp = await world.runReconciler([
            "tie-out", "--fiscal-month", "2026-11", "--bundle-id", "com.example.other", "--out", other,
        ])
        #expect(otherApp.status == 0, "\(otherApp)")
        #expect(otherApp.stdout.contains("no money on either side"), "\(otherApp)")
        #expect((try Self.json("\(other)/tieout.json")["rows"] as? [Any])?.isEmpty == true)

        for bad in [
            ["tie-out", "--fiscal-month", "2026-13"], ["tie-out", "--from", "2026-11-05", "--to", "2026-11-01"],
            ["tie-out", "--fiscal-month", "2026-11", "--from", "2026-11-01", "--to", "2026-11-02"], ["tie-out"],
            ["tie-out", "--from", "2026-02-30", "--to", "2026-03-01"],
        ] {
            let refused = await world.runReconciler(bad)
            #expect(refused.status == 64, "\(bad): \(refused)")
        }
        // An --out that is a file: 78, naming it.
        let file = world.directory.appendingPathComponent("not-a-dir").path
        try Data().write(to: URL(fileURLWithPath: file))
        let unwritable = await world.runReconciler(["tie-out", "--fiscal-month", "2026-11", "--out", file])
        #expect(unwritable.status == 78, "\(unwritable)")
        #expect(unwritable.stderr.contains("not-a-dir"), "\(unwritable)")
    }
}
