import AppStoreSimulator
import Foundation
import Postgres
import TestSupport
import Testing

/// `renewal-reconciler apple-reports download` through the built binary, against the simulator's App Store Connect
/// report endpoints (docs/simulator.md, "App Store Connect reports") and a real PostgreSQL: what is out is stored,
/// what is not yet out is listed, a second download asks only for what is missing, and a wrong key stops it.
@Suite struct AppleReportsDownloadCommandTests {
    @Test func reportsAreStoredOnceLateOnesListedAndAWrongKeyStopsWith78() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let simulator = try ReportSimulator.start(seed: 42, subscriptions: 1500, in: world.directory)
        let server = simulator.server
        defer { try? server.shutdown() }
        let identity = simulator.identity
        let teamKey = simulator.teamKeyFile
        let inAppKey = world.directory.appendingPathComponent("in-app-key.p8").path
        try Data(identity.apiKey.pemRepresentation.utf8).write(to: URL(fileURLWithPath: inAppKey))
        // 31 October is the last day of fiscal October (out by the end of fiscal November, 28 November); 1 November
        // starts fiscal November, whose reports are not out on 1 December.
        func download(key: String, from: String = "2026-10-31", to: String = "2026-11-01") async -> ProcessOutcome {
            await world.runReconciler(
                [
                    "apple-reports", "download", "--api-url", server.baseURL, "--from", from, "--to", to,
                    "--reports", "subscriber", "financial", "finance_detail", "--key-id", identity.teamKeyId,
                    "--issuer-id", identity.issuerId, "--vendor-number",
                    identity.vendorNumber,
                ],
                extraEnvironment: ["APP_STORE_CONNECT_KEY_FILE": key]
            )
        }
        let first = await download(key: teamKey)
        #expect(first.status == 0, "\(first)")
        for line in [
            "subscriber 2026-10-31: stored as file", "subscriber 2026-11-01: stored as file",
            "financial 2027-01: stored as file", "finance_detail 2027-01: stored as file",
            "financial 2027-02: not available yet", "finance_detail 2027-02: not available yet",
            "6 reports: 4 stored, 2 not available yet",
        ] {
            #expect(first.stdout.contains(line), "\(line)\n\(first)")
        }
        let conn = try world.connect()
        defer { conn.close() }
        let files = try conn.query(
            "SELECT kind, period_start::text AS day, fiscal_month, vendor_number, row_count FROM apple_report_files ORDER BY id"
        )
        #expect(
            try files.map { try $0.decode("kind", as: String.self) } == [
                "subscriber", "subscriber", "financial", "finance_detail",
            ]
        )
        #expect(try files.map { try $0.decode("fiscal_month", as: String?.self) } == [nil, nil, "2026-10", "2026-10"])
        #expect(try files.allSatisfy { try $0.decode("vendor_number", as: String.self) == identity.vendorNumber })
        #expect(try files.allSatisfy { try $0.decode("row_count", as: Int.self) > 0 })

        let second = await download(key: teamKey)
        #expect(second.status == 0, "\(second)")
        #expect(second.stdout.components(separatedBy: ": already stored").count - 1 == 4, "\(second)")
        #expect(second.stdout.contains("6 reports: 4 already stored, 2 not available yet"), "\(second)")
        let count = try conn.queryFirst("SELECT count(*) AS n FROM apple_report_files")?.decode("n", as: Int.self)
        #expect(count == 4)

        // The In-App Purchase key is not a team key: the simulator refuses its token, the download stops (78), the
        // key's text appears nowhere.
        let refused = await download(key: inAppKey, from: "2026-11-02", to: "2026-11-02")
        #expect(refused.status == 78, "\(refused)")
        #expect(refused.stderr.contains("refused the key (HTTP 401"), "\(refused)")
        #expect(!(refused.stdout + refused.stderr).contains("PRIVATE KEY"))
    }

    @Test func aDownloadKilledMidwayIsFinishedByTheNextWithEveryDayStoredOnce() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let simulator = try ReportSimulator.start(seed: 7, subscriptions: 800, in: world.directory)
        let server = simulator.server
        defer { try? server.shutdown() }
        let identity = simulator.identity
        let key = simulator.teamKeyFile
        let arguments = [
            "apple-reports", "download", "--api-url", server.baseURL, "--from", "2026-11-10", "--to", "2026-11-14",
            "--reports", "subscriber", "--key-file", key, "--key-id", identity.teamKeyId, "--issuer-id",
            identity.issuerId, "--vendor-number", identity.vendorNumber,
        ]
        let killed = await world.runReconciler(
            arguments,
            extraEnvironment: ["RENEWAL_RECONCILER_CRASH_AT": "report-downloaded:2"]
        )
        #expect(killed.killedBySIGKILL, "\(killed)")
        let conn = try world.connect()
        defer { conn.close() }
        func days() throws -> [String] {
            try conn.query("SELECT period_start::text AS day FROM apple_report_files ORDER BY period_start").map {
                try $0.decode("day", as: String.self)
            }
        }
        #expect(try days() == ["2026-11-10", "2026-11-11"])

        let resumed = await world.runReconciler(arguments)
        #expect(resumed.status == 0, "\(resumed)")
        #expect(resumed.stdout.contains("5 reports: 3 stored, 2 already stored"), "\(resumed)")
        #expect(try days() == ["2026-11-10", "2026-11-11", "2026-11-12", "2026-11-13", "2026-11-14"])
    }

    @Test func anHourlyBudgetSpentStopsWith69AndTheNextHourFinishes() async throws {
        let world = try await EndToEndFixture(subscriptions: 0)
        let simulator = try ReportSimulator.start(seed: 7, subscriptions: 800, hourlyLimit: 3, in: world.directory)
        let server = simulator.server
        defer { try? server.shutdown() }
        let identity = simulator.identity
        let arguments = [
            "apple-reports", "download", "--api-url", server.baseURL, "--from", "2026-11-10", "--to", "2026-11-14",
            "--reports", "subscriber", "--key-file", simulator.teamKeyFile, "--key-id", identity.teamKeyId,
            "--issuer-id", identity.issuerId, "--vendor-number", identity.vendorNumber,
        ]
        let spent = await world.runReconciler(arguments)
        #expect(spent.status == 69, "\(spent)")
        #expect(spent.stderr.contains("hourly request budget"), "\(spent)")
        let conn = try world.connect()
        defer { conn.close() }
        #expect(try conn.queryFirst("SELECT count(*) AS n FROM apple_report_files")?.decode("n", as: Int.self) == 3)

        // A new hour (the simulator's window reset): the next download asks only for the two days left.
        _ = try await ChildProcess.run("/usr/bin/env", ["curl", "-sS", "-X", "POST", server.baseURL + "/_stats/reset"])
        let finished = await world.runReconciler(arguments)
        #expect(finished.status == 0, "\(finished)")
        #expect(finished.stdout.contains("5 reports: 2 stored, 3 already stored"), "\(finished)")
    }
}
