import AppStoreSignedData
import CivilTime
import CurlHTTP
import Foundation
import Logging
import ReceiptDomain
import ReconcilerDemo
import Synchronization
import TestSupport
import Testing

@testable import Reconciler

/// `explain` prints what the run would store (docs/decision-rules.md, "Precedence"), through the App Store Server
/// API too: one subscription of every simulator scenario, and of every kind of forged signature the simulator
/// makes, goes through an in-process backfill whose Server API requests pass through a loopback recorder on their
/// way to `appstore-simulator`; then the statuses answer the run decided on, with the history pages it read after
/// it, goes through `explain --response ... --history ...`'s explainer. Both must leave the same thing: stored
/// with the same values, or refused with the same reason.
@Suite struct ServerAPISimulatorParityTests {
    static let bundleId = "com.example.app"
    static let now = RFC3339.parse("2026-11-25T00:00:00Z")!
    static let seed = "29"
    static let subscriptions = "1500"

    struct Case: CustomStringConvertible {
        var name: String
        var otid: String
        var productId: String
        var receipt: String
        var description: String { "\(name) (\(otid))" }
    }

    /// One subscription of every scenario in the export (`truth.jsonl`) and of every signature fault
    /// (`server-api/signature-faults.jsonl`), with what the app stored (`purchases.jsonl`).
    static func cases(exportedTo directory: URL) throws -> [Case] {
        func lines(_ file: String) throws -> [[String: Any]] {
            try JSONLines.read(directory.appendingPathComponent(file))
        }
        var purchases: [String: [String: Any]] = [:]
        for purchase in try lines("purchases.jsonl") {
            if let otid = purchase["original_transaction_id"] as? String { purchases[otid] = purchase }
        }
        let faults = try lines("server-api/signature-faults.jsonl")
        let forged = Set(faults.compactMap { $0["original_transaction_id"] as? String })
        var named: [(String, String)] = []
        for truth in try lines("truth.jsonl") {
            guard let scenario = truth["scenario"] as? String, let otid = truth["original_transaction_id"] as? String,
                !forged.contains(otid)
            else { continue }
            named.append(("scenario \(scenario)", otid))
        }
        for fault in faults {
            guard let kind = fault["fault"] as? String, let otid = fault["original_transaction_id"] as? String
            else { continue }
            named.append(("forged \(kind)", otid))
        }
        var cases: [String: Case] = [:]
        for (name, otid) in named where cases[name] == nil {
            guard let purchase = purchases[otid], let receipt = purchase["latest_receipt"] as? String else { continue }
            cases[name] = Case(
                name: name,
                otid: otid,
                productId: purchase["product_id"] as? String ?? "",
                receipt: receipt
            )
        }
        return cases.values.sorted { $0.name < $1.name }
    }

    /// One request the run made and the simulator's answer.
    struct Exchange: Sendable {
        var environment: AppleEnvironment
        var isHistory: Bool
        var status: Int
        var body: [UInt8]
    }

    /// Every exchange by original transaction id, in the order the run made them.
    final class Recorder: Sendable {
        private let exchanges = Mutex<[String: [Exchange]]>([:])
        func record(_ otid: String, _ exchange: Exchange) {
            exchanges.withLock { $0[otid, default: []].append(exchange) }
        }
        func exchanges(_ otid: String) -> [Exchange] { exchanges.withLock { $0[otid] ?? [] } }
    }

    /// Passes a Server API request on to the simulator, records it, and returns the simulator's answer (on the
    /// loopback server's connection thread).
    static func forward(
        _ request: LoopbackHTTPServer.Request,
        to base: String,
        http: CurlHTTPClient,
        recorder: Recorder
    ) -> LoopbackHTTPServer.Response {
        let authorization = request.headers.first { $0.key.lowercased() == "authorization" }?.value ?? ""
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<HTTPResponse?>(nil)
        http.execute(
            HTTPRequest(
                url: base + request.path,
                method: request.method == "POST" ? .post : .get,
                headers: [("Authorization", authorization), ("Content-Type", "application/json")],
                body: request.method == "POST" ? Data(request.body) : nil
            )
        ) { outcome in
            if case .success(let response) = outcome { result.withLock { $0 = response } }
            done.signal()
        }
        done.wait()
        guard let response = result.withLock({ $0 }) else { return .unanswered }
        let path = request.path.split(separator: "?")[0]
        if let otid = path.split(separator: "/").last.map(String.init) {
            recorder.record(
                otid,
                Exchange(
                    environment: path.hasPrefix("/sandbox/") ? .sandbox : .production,
                    isHistory: path.contains("/inApps/v2/history/"),
                    status: response.status,
                    body: [UInt8](response.body)
                )
            )
        }
        let headers = response.headers.fields.filter { ["content-type", "retry-after"].contains($0.name.lowercased()) }
        return LoopbackHTTPServer.Response(
            status: response.status,
            headers: headers.map { ($0.name, $0.value) },
            body: [UInt8](response.body)
        )
    }

    /// The simulator's In-App Purchase key, ids and root, as `export` wrote them under `server-api/`.
    struct Identity {
        var keyId: String
        var issuerId: String
        var appAppleId: Int64
        var keyFile: String
        var rootFile: String

        init(directory: URL) throws {
            let folder = directory.appendingPathComponent("server-api")
            let data = try Data(contentsOf: folder.appendingPathComponent("api.json"))
            guard let api = try JSONSerialization.jsonObject(with: data) as? [String: Any],
                let keyId = api["key_id"] as? String, let issuerId = api["issuer_id"] as? String,
                let appAppleId = api["app_apple_id"] as? NSNumber
            else { throw FixtureError("server-api/api.json is not the simulator's") }
            self.keyId = keyId
            self.issuerId = issuerId
            self.appAppleId = appAppleId.int64Value
            keyFile = folder.appendingPathComponent("key.p8").path
            rootFile = folder.appendingPathComponent("root.pem").path
        }
    }

    // MARK: explain

    /// What `explain --response --history` concludes from what the run read for `testCase`: the last statuses
    /// answer it was given, and the history pages that followed it in the same environment.
    static func explained(_ testCase: Case, _ exchanges: [Exchange], identity: Identity) throws -> StoredConclusion {
        // The last usable statuses answer, else the last statuses answer (an error: explain takes it as the last).
        guard
            let last = exchanges.lastIndex(where: { !$0.isHistory && $0.status == 200 })
                ?? exchanges.lastIndex(where: { !$0.isHistory })
        else { return StoredConclusion(ending: .unresolved, code: "no statuses answer recorded") }
        let statuses = exchanges[last]
        let pages = exchanges[(last + 1)...].filter {
            $0.isHistory && $0.status == 200 && $0.environment == statuses.environment
        }
        let roots = try TrustedRootsConfiguration.load(flagFiles: [identity.rootFile], only: true)
        let outcome = try SubscriptionStatusExplainer.explain(
            body: statuses.body,
            history: pages.map(\.body),
            sourceName: testCase.name,
            verifier: { environment in
                SignedDataVerifier(
                    roots: roots,
                    options: .init(
                        bundleId: bundleId,
                        environment: environment == .production ? .production : .sandbox,
                        appAppleId: environment == .sandbox ? nil : identity.appAppleId
                    )
                )
            },
            environment: statuses.environment,
            originalTransactionId: testCase.otid,
            bundleId: bundleId,
            now: now
        )
        guard case .object(let members) = outcome.json else { throw FixtureError("explain printed no object") }
        var printed: [String: String] = [:]
        for (key, value) in members {
            switch value {
            case .string(let text): printed[key] = text
            case .integer(let number): printed[key] = String(number)
            case .bool(let flag): printed[key] = String(flag)
            default: break
            }
        }
        guard printed["verdict"] == "ok" else {
            // The reason's code: the one whose summary the printed reason starts with.
            let reason = printed["reason"] ?? ""
            let code = VerdictReason.Code.allCases.first { reason.hasPrefix(VerdictReason($0).summary) }
            return StoredConclusion(ending: .rejected, code: code?.rawValue ?? reason)
        }
        var values: [String: String] = [:]
        for key in StoredConclusion.storedKeys { values[key] = printed[key] }
        return StoredConclusion(ending: .stored, values: values)
    }

    // MARK: The run

    @Test func everySimulatorScenarioIsStoredAsExplainSaysThroughTheServerAPI() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parity-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let population = ["--bundle-id", Self.bundleId, "--signature-faulty-subscriptions", "0.05"]
        try await SimulatorProcess.exported(
            binary: BuiltBinary.simulator,
            seed: UInt64(Self.seed)!,
            subscriptions: Int(Self.subscriptions)!,
            now: Self.now,
            into: directory.path,
            extra: population
        )
        let cases = try Self.cases(exportedTo: directory)
        #expect(cases.count >= 34, "\(cases.map(\.name))")
        #expect(cases.filter { $0.name.hasPrefix("forged ") }.count >= 4, "\(cases.map(\.name))")
        let identity = try Identity(directory: directory)
        let simulator = try await SimulatorProcess.started(
            binary: BuiltBinary.simulator,
            arguments: [
                "--seed", Self.seed, "--subscriptions", Self.subscriptions, "--now", RFC3339.string(Self.now),
                "--max-rps-statuses", "2000", "--max-rps-history", "2000",
            ] + population,
            sharedSecret: "parity-simulator-secret"
        )
        defer { simulator.signal(SIGKILL) }

        let world = try StoreWorld()
        var ids: [String: Int64] = [:]
        for testCase in cases {
            ids[testCase.name] = try world.insertSubscription(
                testCase.otid,
                expiresAt: nil,
                productId: testCase.productId,
                receipt: testCase.receipt,
                environment: nil
            )
        }
        let recorder = Recorder()
        let http = CurlHTTPClient()
        defer { http.shutdown() }
        let base = "http://127.0.0.1:\(simulator.port)"
        let proxy = try LoopbackHTTPServer { request in
            Self.forward(request, to: base, http: http, recorder: recorder)
        }
        defer { proxy.stop() }
        let settings = try ServerAPISettings.load(
            environment: [:],
            privateKeyFile: identity.keyFile,
            keyId: identity.keyId,
            issuerId: identity.issuerId,
            bundleId: Self.bundleId,
            appAppleId: String(identity.appAppleId),
            productionURL: proxy.baseURL,
            sandboxURL: proxy.baseURL + "/sandbox",
            rootFiles: [identity.rootFile],
            rootsOnly: true,
            budgets: ServerAPIBudgets(statuses: 1000, history: 1000)
        )
        var options = RunOptions()
        options.rate = 1000
        options.concurrency = 16
        options.maxUnresolvedFraction = 1
        options.requestTimeoutSeconds = 5
        var request = ReconciliationRunner.Request(
            mode: .backfill,
            selection: .backfill(BackfillFilter(all: true)),
            options: options,
            apps: [AppDefinition(bundleId: Self.bundleId, credentials: .serverAPI(settings))]
        )
        request.now = Self.now
        let logger = Logger(label: "parity", factory: { _ in SwiftLogNoOpLogHandler() })
        // The run waits inside (its pipeline's threads): on a thread of its own, never one of the test pool's.
        let finalRequest = request
        let url = world.database.url
        let summary = try await OffPool.run {
            try ReconciliationRunner(connectionString: url, logger: logger).run(finalRequest)
        }
        #expect(summary.exitCode == .success, "\(summary.message ?? "")")

        var agreed = 0
        for testCase in cases {
            let exchanges = recorder.exchanges(testCase.otid)
            let explained = try Self.explained(testCase, exchanges, identity: identity)
            guard let id = ids[testCase.name],
                let ran = try StoredConclusion.read(subscription: id, from: world.connection)
            else {
                Issue.record("\(testCase): the run left no item")
                continue
            }
            #expect(explained == ran, "\(testCase): explain \(explained); the run \(ran)")
            if explained == ran { agreed += 1 }
            if testCase.name.hasPrefix("forged ") {
                #expect(
                    ran.ending == .rejected && ran.code == VerdictReason.Code.signedDataRefused.rawValue,
                    "\(testCase): \(ran)"
                )
            }
        }
        print("Server API decision parity: \(agreed) of \(cases.count) simulator cases agree")

        // The ledger keeps what each signed transaction says of the customer and the offer (docs/reports.md).
        let kept = try #require(
            try world.connection.queryFirst(
                """
                SELECT count(*) FILTER (WHERE signed_transaction IS NOT NULL) AS signed,
                       count(*) FILTER (WHERE signed_transaction IS NOT NULL AND app_transaction_id IS NULL) AS missing,
                       count(*) FILTER (WHERE offer_identifier IS NOT NULL) AS offers
                  FROM subscription_transactions
                """
            )
        )
        #expect(try kept.decode("signed", as: Int64.self) > 0)
        #expect(try kept.decode("missing", as: Int64.self) == 0)
    }
}
