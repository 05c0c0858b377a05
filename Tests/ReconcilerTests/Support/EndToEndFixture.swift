import CivilTime
import Foundation
import Postgres
import Reconciler
import ReconcilerDemo
import TestSupport

/// What a finished child process left (TestSupport's `ChildProcessOutcome`).
typealias ProcessOutcome = ChildProcessOutcome

/// A child process started in the background and awaited (TestSupport's `ChildProcess`).
typealias RunningProcess = ChildProcess

extension ChildProcess {
    /// Awaits the end (at most `limit` seconds, a safety net: the process is killed after it) and returns the
    /// outcome; no thread waits meanwhile.
    func wait(limit: TimeInterval = 1800) async -> ProcessOutcome {
        await outcome(limit: .milliseconds(Int(limit * 1000)))
    }
}

extension [ChildProcess] {
    /// Awaits every process of the list (each at most `limit` seconds), outcomes in the list's order.
    func wait(limit: TimeInterval = 1800) async -> [ProcessOutcome] {
        var outcomes: [ProcessOutcome] = []
        for process in self { outcomes.append(await process.wait(limit: limit)) }
        return outcomes
    }
}

/// One end-to-end world: a fresh database with the schema, the simulator's export of `subscriptions`
/// purchases imported into it, a simulator serving the same population, and a temp directory.
/// Everything goes through the real binaries, the way an operator runs them.
// @unchecked Sendable: only `simulator` is mutable, and only the test that owns the fixture sets it (from its own
// task; a `poll` action may stop it while that task waits for the poll); the shared reference runs never mutate it.
final class EndToEndFixture: @unchecked Sendable {
    static let bundleId = "com.example.renewals"
    /// A fixed as-of instant shared by the simulator and the reconciler (whole seconds).
    static let defaultNow = "2026-11-21T02:30:00Z"

    static var packageRoot: URL {
        // .../Tests/ReconcilerTests/Support/EndToEndFixture.swift -> package root
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }
    static var binDirectory: URL { BuiltBinary.directory }
    static var reconcilerBinary: String { binDirectory.appendingPathComponent("renewal-reconciler").path }
    static var simulatorBinary: String { binDirectory.appendingPathComponent("appstore-simulator").path }

    let database: TestDatabase
    let directory: URL
    let now: String
    /// The simulator's `--anchor` (the instant its scenarios are built around); nil: `now`.
    let anchor: String?
    let seed: UInt64
    let subscriptions: Int
    let secret: String
    private(set) var simulator: SimulatorProcess?

    var truthFile: String { directory.appendingPathComponent("truth.jsonl").path }
    var purchasesFile: String { directory.appendingPathComponent("purchases.jsonl").path }
    var reportDirectory: String { directory.appendingPathComponent("reports").path }

    /// Creates the database and the temp directory, migrates, and (when `subscriptions > 0`) exports and imports;
    /// with `seedPriorRuns`, puts in what a previous night's run left in some rows, as the demo does. `server` is
    /// another PostgreSQL server than the suite's (a test's own, which it may restart). `anchor` (export and
    /// simulator): the same world at a later `now`.
    init(
        subscriptions: Int,
        seed: UInt64 = 2026,
        now: String = EndToEndFixture.defaultNow,
        anchor: String? = nil,
        seedPriorRuns: Bool = false,
        server: String? = nil,
        world: [String] = []
    ) async throws {
        database = try TestDatabase.make(server: server)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rr-e2e-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.now = now
        self.anchor = anchor
        self.world = world
        self.seed = seed
        self.subscriptions = subscriptions
        secret = "e2e-\(UUID().uuidString.prefix(8))-secret"
        let migrated = await runReconciler(["migrate"])
        guard migrated.status == 0 else { throw FixtureError("migrate failed: \(migrated)") }
        if subscriptions > 0 {
            guard let date = RFC3339.parse(now) else { throw FixtureError("bad now \(now)") }
            try await SimulatorProcess.exported(
                binary: Self.simulatorBinary,
                seed: seed,
                subscriptions: subscriptions,
                now: date,
                into: directory.path,
                extra: anchorArguments + world
            )
            let imported = await runReconciler(["import", "--file", purchasesFile])
            guard imported.status == 0 else { throw FixtureError("import failed: \(imported)") }
            if seedPriorRuns {
                let conn = try database.connect()
                defer { conn.close() }
                try PriorRunSeeder(connection: conn).seed(truthFile: truthFile)
            }
        }
    }

    deinit {
        // Killed without waiting (its end is reaped in the background): a deinit may run on the test pool's thread.
        simulator?.signal(SIGKILL)
        database.drop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts (or restarts) the simulator for the same population with extra arguments (faults, rates).
    @discardableResult
    /// Starts (or restarts) the simulator; `clock`: its `--now` instead of the fixture's (a later night of the same
    /// world: give the fixture an `anchor`).
    func startSimulator(_ extra: [String] = [], clock: String? = nil) async throws -> SimulatorProcess {
        let previous = simulator
        let arguments =
            [
                "--seed", String(seed), "--subscriptions", String(max(subscriptions, 1)), "--now", clock ?? now,
                "--bundle-id", Self.bundleId,
            ] + anchorArguments + world + extra
        await previous?.stopped()
        let sim = try await SimulatorProcess.started(
            binary: Self.simulatorBinary,
            arguments: arguments,
            sharedSecret: secret
        )
        simulator = sim
        return sim
    }

    /// `--anchor` for the simulator's export and serve, when the fixture has one.
    var anchorArguments: [String] { anchor.map { ["--anchor", $0] } ?? [] }
    /// The simulator's world options for export and serve (`--mix retail`, ...), from `init`'s `world`.
    let world: [String]

    /// The reconciler's environment: the database, the simulator's URLs, the secret, the bundle id.
    var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DATABASE_URL"] = database.url
        env["APPLE_SHARED_SECRET"] = secret
        env["APPLE_BUNDLE_ID"] = Self.bundleId
        env.removeValue(forKey: "APPLE_SHARED_SECRET_FILE")
        env.removeValue(forKey: "RENEWAL_RECONCILER_CRASH_AT")
        // The migrations built into the binary, as on a host: a test that wants a directory passes --sql-dir.
        env.removeValue(forKey: "RENEWAL_RECONCILER_SQL_DIR")
        if let simulator {
            env["APPLE_VERIFY_URL"] = simulator.productionURL
            env["APPLE_SANDBOX_VERIFY_URL"] = simulator.sandboxURL
        }
        return env
    }

    /// The settings of a run through the simulator's App Store Server API: the key, ids and root `export`
    /// wrote under `server-api/`, the simulator's base URLs, and its root trusted alone.
    func serverAPIEnvironment(keyId: String? = nil) throws -> [String: String] {
        let folder = directory.appendingPathComponent("server-api")
        guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent("api.json").path),
            let api = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let exportedKeyId = api["key_id"] as? String, let issuerId = api["issuer_id"] as? String,
            let appAppleId = api["app_apple_id"] as? NSNumber, let simulator
        else { throw FixtureError("no server-api/api.json or no simulator") }
        let base = "http://127.0.0.1:\(simulator.port)"
        return [
            "APPLE_SOURCE": "server-api",
            "APPLE_KEY_ID": keyId ?? exportedKeyId,
            "APPLE_ISSUER_ID": issuerId,
            "APPLE_APP_APPLE_ID": appAppleId.stringValue,
            "APPLE_PRIVATE_KEY_FILE": folder.appendingPathComponent("key.p8").path,
            "APPLE_SERVER_API_URL": base,
            "APPLE_SERVER_API_SANDBOX_URL": base + "/sandbox",
            "APPLE_ROOT_CA_FILE": folder.appendingPathComponent("root.pem").path,
            "APPLE_ROOT_CA_ONLY": "1",
        ]
    }

    /// `run --now <now> --report-dir <tmp>` plus `arguments`, started in the background.
    func startRun(
        _ arguments: [String] = [],
        extraEnvironment: [String: String] = [:]
    ) async throws -> RunningProcess {
        var env = environment
        for (k, v) in extraEnvironment { env[k] = v }
        return try await RunningProcess(
            Self.reconcilerBinary,
            ["run", "--now", now, "--report-dir", reportDirectory] + arguments,
            environment: env,
            directory: directory
        )
    }

    /// `count` runs with the same `arguments` (workers), started one after the other in the background.
    func startRuns(_ count: Int, _ arguments: [String]) async throws -> [RunningProcess] {
        var runs: [RunningProcess] = []
        for _ in 0..<count { runs.append(try await startRun(arguments)) }
        return runs
    }

    /// Runs the reconciler to the end with the fast defaults (`--rate 2000 --concurrency 64`) unless overridden.
    func run(
        _ arguments: [String] = ["--rate", "2000", "--concurrency", "64"],
        extraEnvironment: [String: String] = [:]
    )
        async throws -> ProcessOutcome
    {
        try await startRun(arguments, extraEnvironment: extraEnvironment).wait()
    }

    /// Runs any reconciler subcommand with this fixture's environment and awaits its end.
    func runReconciler(_ arguments: [String], extraEnvironment: [String: String] = [:]) async -> ProcessOutcome {
        var env = environment
        for (k, v) in extraEnvironment { env[k] = v }
        do {
            return try await RunningProcess(Self.reconcilerBinary, arguments, environment: env, directory: directory)
                .wait()
        } catch {
            return ProcessOutcome(status: -1, reason: .exit, stdout: "", stderr: "could not start: \(error)")
        }
    }

    func connect() throws -> PostgresConnection { try database.connect() }

    /// Scenarios `compareWithTruth` leaves out (to check them by hand instead). None today: the truth states
    /// the 21010 rule itself (`entitlement_ended`), and `accountNotFoundProblems` checks those rows a second
    /// time, independently of the truth file.
    static let scenariosCheckedSeparately: Set<String> = []

    /// `truth.jsonl` without `scenariosCheckedSeparately` (written once, next to it).
    var comparableTruthFile: String { directory.appendingPathComponent("truth-comparable.jsonl").path }

    /// How many truth records `compareWithTruth` compares.
    func comparableTruthCount() throws -> Int {
        try truthRecords().filter { !Self.scenariosCheckedSeparately.contains($0["scenario"] as? String ?? "") }.count
    }

    /// The simulator's truth against the database, `scenariosCheckedSeparately` left out.
    func compareWithTruth(detailLimit: Int = 50, serverAPI: Bool = false) throws -> TruthComparison.Report {
        try Self.writeComparableTruth(from: truthFile, to: comparableTruthFile)
        let conn = try connect()
        defer { conn.close() }
        var comparison = TruthComparison(connection: conn, bundleId: Self.bundleId)
        comparison.detailLimit = detailLimit
        comparison.serverAPI = serverAPI
        return try comparison.compare(truthFile: comparableTruthFile)
    }

    /// Copies the lines of `source` whose scenario is not in `scenariosCheckedSeparately` to `destination`.
    static func writeComparableTruth(from source: String, to destination: String) throws {
        guard let data = FileManager.default.contents(atPath: source) else { throw FixtureError("no truth file") }
        let kept = try data.split(separator: UInt8(ascii: "\n")).filter { line in
            let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]
            return !scenariosCheckedSeparately.contains(object?["scenario"] as? String ?? "")
        }
        var out = Data()
        for line in kept {
            out.append(contentsOf: line)
            out.append(UInt8(ascii: "\n"))
        }
        try out.write(to: URL(fileURLWithPath: destination))
    }

    /// Rows Apple answered 21010 (the `deleted_account` scenario) must have ended their entitlement: state
    /// `expired`, verified `ok` with Apple status 21010, auto-renew off, expiry no later than `asOf`, no
    /// ledger rows. Returns one line per problem (empty: all fine) and how many rows were checked.
    func accountNotFoundProblems(asOf: String? = nil) throws -> (problems: [String], checked: Int) {
        let ids = try truthRecords().filter { $0["scenario"] as? String == "deleted_account" }
            .compactMap { $0["original_transaction_id"] as? String }
        let conn = try connect()
        defer { conn.close() }
        return (try Self.accountNotFoundProblems(conn, ids: ids, asOf: asOf ?? now), ids.count)
    }

    static func accountNotFoundProblems(_ conn: PostgresConnection, ids: [String], asOf: String) throws -> [String] {
        guard let limit = RFC3339.parse(asOf) else { throw FixtureError("bad as-of \(asOf)") }
        var problems: [String] = []
        for id in ids {
            guard
                let row = try conn.queryFirst(
                    """
                    SELECT state, last_verify_status, last_apple_status, auto_renew, expires_at,
                           (SELECT count(*) FROM subscription_transactions t
                             WHERE t.original_transaction_id = s.original_transaction_id) AS ledger
                      FROM subscriptions s LEFT JOIN subscription_checks c ON c.subscription_id = s.id
                     WHERE original_transaction_id = $1
                    """,
                    [id]
                )
            else {
                problems.append("\(id): no row")
                continue
            }
            let state: String? = try row.decode("state")
            let verify: String? = try row.decode("last_verify_status")
            let status: Int? = try row.decode("last_apple_status")
            let autoRenew: Bool? = try row.decode("auto_renew")
            let expires: Date? = try row.decode("expires_at")
            let ledger: Int = try row.decode("ledger")
            if state != "expired" || verify != "ok" || status != 21010 || autoRenew != false || ledger != 0
                || (expires.map { $0 > limit } ?? true)
            {
                let shownStatus = status.map(String.init) ?? "nil"
                let shownAutoRenew = autoRenew.map(String.init) ?? "nil"
                let shownExpires = expires.map(RFC3339.string) ?? "nil"
                problems.append(
                    "\(id): state \(state ?? "nil"), verify \(verify ?? "nil"), status \(shownStatus), "
                        + "auto_renew \(shownAutoRenew), expires \(shownExpires), ledger \(ledger)"
                )
            }
        }
        return problems
    }

    /// Parsed truth records (one dictionary per line).
    func truthRecords() throws -> [[String: Any]] {
        try JSONLines.read(URL(fileURLWithPath: truthFile))
    }

    /// The report folders written under `reportDirectory`.
    func reportFolders() -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: reportDirectory)) ?? []
        // Run folders only: trends.csv and trends.html sit beside them.
        return names.filter { $0.contains("_run-") }.sorted().map {
            URL(fileURLWithPath: reportDirectory).appendingPathComponent($0)
        }
    }

    /// summary.json of the report folder of run `runId`.
    func summary(runId: Int64) throws -> [String: Any] {
        guard let folder = reportFolders().first(where: { $0.lastPathComponent.hasSuffix("_run-\(runId)") }) else {
            throw FixtureError("no report folder for run \(runId) in \(reportFolders().map(\.lastPathComponent))")
        }
        let data = try Data(contentsOf: folder.appendingPathComponent("summary.json"))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw FixtureError("summary.json of run \(runId) is not an object")
        }
        return object
    }

    /// The simulator's `GET /_stats`.
    func simulatorStats() async throws -> [String: Any] {
        guard let simulator else { throw FixtureError("no simulator") }
        return try await Self.simulatorStats(port: simulator.port)
    }

    /// `GET /_stats` of the simulator listening on `port`.
    static func simulatorStats(port: Int) async throws -> [String: Any] {
        let fetched = try await ChildProcess.run("/usr/bin/env", ["curl", "-sf", "http://127.0.0.1:\(port)/_stats"])
        guard let object = try JSONSerialization.jsonObject(with: Data(fetched.stdout.utf8)) as? [String: Any] else {
            throw FixtureError("/_stats is not a JSON object")
        }
        return object
    }

    /// Polls `condition` every 50 ms until it holds or `limit` seconds pass (a safety limit), then runs `action` at
    /// once (freezing or killing a child at the moment the test looks for). Both run on a thread of their own, not on
    /// the test pool, whose threads may all be busy with other tests for seconds: a child the test must catch
    /// mid-run could otherwise finish first.
    @discardableResult
    func poll(
        limit: TimeInterval = 60,
        _ condition: @escaping @Sendable () throws -> Bool,
        then action: @escaping @Sendable () -> Void = {}
    ) async throws -> Bool {
        try await OffPool.run {
            let deadline = Date().addingTimeInterval(limit)
            while Date() < deadline {
                if try condition() {
                    action()
                    return true
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
            return false
        }
    }
}

extension PostgresConnection {
    /// `SELECT ... AS n` as an Int.
    func count(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) throws -> Int {
        try queryFirst(sql, parameters)?.decode("n", as: Int.self) ?? -1
    }
}
