import AppStoreSimulator
import Foundation
import Postgres
import TestSupport
import Testing

/// End to end against the simulator: the ledger a Server API run wrote, the Subscriber and Financial reports the same
/// world serves downloaded through the API, and the tie-out of November's days (docs/tie-out.md).
@Suite struct TieOutSimulatorTests {
    @Test func aRunsLedgerTiesOutWithTheSimulatorsServedReports() async throws {
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
        // The same world in process (ReportSimulator's anchor and clock), serving App Store Connect's reports.
        let reports = try ReportSimulator.start(seed: 42, subscriptions: 1500, in: world.directory)
        defer { try? reports.server.shutdown() }
        let identity = reports.identity
        let download = await world.runReconciler([
            "apple-reports", "download", "--api-url", reports.server.baseURL, "--from", "2026-10-31", "--to",
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
        // The simulator plants no cause yet. Its Subscriber report of a day renders the world as of that day's end:
        // 13 refunds of 16 to 18 November that Apple reversed later (REFUND_REVERSED notifications) are in the
        // reports while the ledger holds their purchases unrefunded; the notifications explain every one.
        #expect(lost.isEmpty, "\(lost.prefix(5))")
        let rows = try #require(json["rows"] as? [[String: Any]])
        var reversedRefunds = 0
        var causes: Set<String> = []
        for row in rows where (row["difference_milliunits"] as? Int64 ?? 0) != 0 {
            causes.insert(row["cause"] as? String ?? "?")
            if row["cause"] as? String == "refund_reversed", row["measure"] as? String == "customer_price" {
                reversedRefunds -= row["apple_units"] as? Int ?? 0
            }
        }
        #expect(reversedRefunds == 13)
        // Family members' copies, Apple's 85% rate where the ledger's first year of paid service is shorter than
        // Apple's count, and the reversed refunds: nothing unexplained.
        #expect(causes == ["family_sharing", "commission_tier", "refund_reversed"], "\(causes)")
        let headline = try #require(json["headline"] as? [[String: Any]])
        #expect(headline.count == 6)
        for currency in headline {
            #expect(currency["explained_share"] as? Double == 1, "\(currency)")
            #expect((currency["matched_share"] as? Double ?? 0) >= 0.95, "\(currency)")
        }
    }
}
