import AppStoreSimulator
import AppleReports
import Foundation
import Postgres
import TestSupport
import Testing

/// End to end against the simulator: the ledger a Server API run wrote, the Subscriber and Financial reports the same
/// world serves downloaded through the API, and the tie-out of November's days (docs/tie-out.md, "Against the
/// simulator").
@Suite struct TieOutSimulatorTests {
    @Test func aRunsLedgerTiesOutWithTheSimulatorsServedReportsAndFindsEveryLostOrder() async throws {
        let now = "2026-12-01T12:00:00Z"
        let world = try await EndToEndFixture(subscriptions: 1500, seed: 42, now: now, anchor: "2026-11-21T03:00:00Z")
        try await world.startSimulator([
            "--max-rps-statuses", "2000", "--max-rps-history", "2000", "--max-rps-notification-history", "2000",
        ])
        let env = try world.serverAPIEnvironment()
        let run = try await world.run(
            [
                "--rate", "2000", "--concurrency", "32", "--statuses-rate", "2000", "--history-rate", "2000",
                "--notifications-rate", "2000", "--notifications-lookback", "180d",
            ],
            extraEnvironment: env
        )
        #expect(run.status == 0, "\(run)")
        // The same world in process (ReportSimulator's anchor and clock), serving App Store Connect's reports, with 6
        // customers whose purchases never reached the app's database: only the reports know them.
        let reports = try ReportSimulator.start(seed: 42, subscriptions: 1500, lostOrders: 6, in: world.directory)
        defer { try? reports.server.shutdown() }
        let identity = reports.identity
        let download = await world.runReconciler([
            "apple-reports", "download", "--api-url", reports.server.baseURL, "--from", "2026-08-29", "--to",
            "2026-11-30", "--key-file", reports.teamKeyFile, "--key-id", identity.teamKeyId, "--issuer-id",
            identity.issuerId, "--vendor-number", identity.vendorNumber,
        ])
        #expect(download.status == 0, "\(download)")
        let out = world.directory.appendingPathComponent("tieout").path
        let tieOut = await world.runReconciler(["tie-out", "--from", "2026-11-01", "--to", "2026-11-30", "--out", out])
        #expect(tieOut.status == 0, "\(tieOut)")
        for name in ["tieout.csv", "tieout.json", "tieout.html"] {
            #expect(FileManager.default.fileExists(atPath: "\(out)/\(name)"), "\(name)")
        }
        // 30 November's Subscriber report is not out on the simulator's 1 December: named, its ledger left out.
        #expect(tieOut.stdout.contains("no Subscriber report imported for 1 day(s): 2026-11-30"), "\(tieOut)")
        let json = try TieOutDBTests.json("\(out)/tieout.json")
        let unexplained = try #require(json["unexplained"] as? [String: Any])
        let lost = try #require(unexplained["apple_only"] as? [[String: Any]])
        let ledgerOnly = try #require(unexplained["ledger_only"] as? [[String: Any]])
        // Every ledger sale and refund of the compared days is in Apple's Subscriber report.
        #expect(ledgerOnly.isEmpty, "\(ledgerOnly.prefix(5))")

        // Every lost order is found, and nothing else: the lost customers' paid purchases of 1 to 29 November, by
        // Pacific day, product and country.
        let planted = try Self.lostPurchases(reports.server.population, from: "2026-11-01", to: "2026-11-29")
        #expect(!planted.isEmpty)
        #expect(Self.keys(lost) == planted)
        #expect(lost.allSatisfy { $0["refund"] as? Bool == false })

        // The simulator plants taxes (VAT in GB and DE, consumption tax in JP, in the price), and its Subscriber report
        // of a day renders the world as of that day's end: refunds Apple reversed days later (REFUND_REVERSED) stay
        // in the reports while the ledger holds their purchases unrefunded.
        let rows = try #require(json["rows"] as? [[String: Any]])
        var causes: Set<String> = []
        var taxed: Set<String> = []
        var reversedRefunds = 0
        for row in rows where (row["difference_milliunits"] as? Int64 ?? 0) != 0 {
            let cause = row["cause"] as? String ?? "?"
            causes.insert(cause)
            if cause == "tax" { taxed.insert(row["country"] as? String ?? "?") }
            if cause == "refund_reversed", row["measure"] as? String == "customer_price",
                row["view"] as? String == "daily"
            {
                reversedRefunds -= row["apple_units"] as? Int ?? 0
            }
            if cause == "unexplained" {
                // Only the lost orders' rows.
                #expect((row["detail"] as? String ?? "").contains("purchase not in the ledger"), "\(row)")
            }
        }
        #expect(taxed == ["GB", "DE", "JP"])
        #expect(reversedRefunds > 0)
        // Family members' copies, Apple's 85% rate where the ledger's first year of paid service is shorter than
        // Apple's count, rounding within a minor unit (matched), taxes, reversed refunds and the lost orders.
        #expect(
            causes == ["matched", "family_sharing", "commission_tier", "tax", "refund_reversed", "unexplained"],
            "\(causes)"
        )
        let headline = try #require(json["headline"] as? [[String: Any]])
        #expect(headline.count == 6)
        for currency in headline {
            #expect((currency["explained_share"] as? Double ?? 0) >= 0.99, "\(currency)")
            #expect((currency["matched_share"] as? Double ?? 0) >= 0.95, "\(currency)")
        }

        // Fiscal September (30 August to 26 September), whose consolidated and detailed Financial reports are out, and
        // fiscal October's detailed report: the monthly view's differences are the ledger's (taxes, family sharing,
        // the 85% rate), Apple's settlement timing between the two months, and the lost orders; the Financial report
        // agrees with the Subscriber report once settlement timing is read from the detailed reports.
        let september = world.directory.appendingPathComponent("tieout-september").path
        let fiscal = await world.runReconciler(["tie-out", "--fiscal-month", "2026-09", "--out", september])
        #expect(fiscal.status == 0, "\(fiscal)")
        let monthJSON = try TieOutDBTests.json("\(september)/tieout.json")
        #expect((monthJSON["period"] as? [String: Any])?["fiscal_months_compared"] as? [String] == ["2026-09"])
        #expect(monthJSON["notes"] as? [String] == [], "\(monthJSON["notes"] ?? "")")
        let monthLost = try #require((monthJSON["unexplained"] as? [String: Any])?["apple_only"] as? [[String: Any]])
        #expect(
            Self.keys(monthLost)
                == (try Self.lostPurchases(reports.server.population, from: "2026-08-30", to: "2026-09-26"))
        )
        #expect(!monthLost.isEmpty)
        var monthly: Set<String> = []
        for row in monthJSON["rows"] as? [[String: Any]] ?? []
        where row["view"] as? String == "monthly" && (row["difference_milliunits"] as? Int64 ?? 0) != 0 {
            monthly.insert(row["cause"] as? String ?? "?")
            if row["cause"] as? String == "unexplained" {
                #expect((row["detail"] as? String ?? "").contains("purchase not in the ledger"), "\(row)")
                #expect(!(row["detail"] as? String ?? "").contains("differs"), "\(row)")
            }
        }
        #expect(monthly.isSuperset(of: ["timing", "tax", "family_sharing", "unexplained"]), "\(monthly)")
        #expect(monthly.isSubset(of: ["matched", "timing", "tax", "family_sharing", "commission_tier", "unexplained"]))
    }

    /// The lost customers' paid purchases from `from` to `to` (Pacific days), as `day product country`, sorted.
    static func lostPurchases(_ population: Population, from: String, to: String) throws -> [String] {
        let first = try #require(PacificDay(from))
        let last = try #require(PacificDay(to))
        var planted: [String] = []
        for family in population.lostOrders {
            let storefront = Storefront.of(seed: population.seed, familyIndex: family.index)
            for plan in family.subscriptions {
                for t in plan.timeline(at: Int64(last.next.start.timeIntervalSince1970 * 1000)).transactions
                where storefront.price(of: t, anchor: population.anchor) > 0 {
                    let day = PacificDay(of: Date(timeIntervalSince1970: Double(t.purchase) / 1000))
                    guard day >= first, day <= last else { continue }
                    planted.append("\(day) \(t.product.productId) \(storefront.country)")
                }
            }
        }
        return planted.sorted()
    }

    /// The tie-out's lost orders as `day product country`, sorted.
    static func keys(_ lost: [[String: Any]]) -> [String] {
        lost.map {
            "\($0["day"] as? String ?? "") \($0["product_id"] as? String ?? "") \($0["country"] as? String ?? "")"
        }
        .sorted()
    }
}
