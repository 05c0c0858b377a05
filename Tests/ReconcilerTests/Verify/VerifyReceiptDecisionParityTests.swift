import AppStoreClient
import CivilTime
import CurlHTTP
import Foundation
import Logging
import Postgres
import ReceiptDomain
import Reconciler
import ReconcilerDemo
import Synchronization
import TestSupport
import Testing

/// `explain` prints what the run would store (docs/decision-rules.md, "Precedence"). Every verifyReceipt fixture
/// (`Tests/ReceiptDomainTests/Fixtures`) and one subscription of every simulator scenario go through what
/// `explain --response FILE --environment ENV --original-transaction-id ID --bundle-id ... --now ...` calls
/// (`ExplainReport.build`) and through one in-process run (`ReconciliationRunner`, a real PostgreSQL, one fresh row
/// per case) against a loopback verifyReceipt that answers each receipt with its fixture, or passes it on to the
/// `appstore-simulator` binary and records the answer. Both must leave the same thing: stored with the same
/// state, expiry, product, renewal fields, revocation and environment, or refused with the same reason, or
/// nothing known.
///
/// `explain` reads one answer. Where it says `switch_environment`, the next answer (the one the run got from the
/// other endpoint) is explained with `--environment` set to it, as an operator would. Where a fixture is an HTTP or
/// transport fault rather than a body, the classification the client applies (`VerifyClassifier.classify`) is
/// compared instead. A `retry` ends the run's item without a decision after its attempts: `unresolved`, or
/// `invalid_receipt` when every attempt was 21002 (docs/decision-rules.md, "1. What an exchange means"). A body that
/// is not a verifyReceipt answer at all is refused by `explain` (`unreadable`, exit 64) and retried by the run
/// (`malformed_response`): neither stores anything.
///
/// The rows are brand-new (original transaction id, product, receipt, and the environment the fixture was asked in):
/// `explain` has no stored row, so the run is given none either; each fixture's own stored row and expectations
/// are `FixtureScenarioTests`' business.
@Suite struct VerifyReceiptDecisionParityTests {
    static let bundleId = "com.example.reader"
    /// The fixtures' `now`, and the simulator's clock.
    static let now = RFC3339.parse("2024-06-01T00:00:00Z")!
    static let maxAttempts = 2
    static let fixtureDirectory = BuiltBinary.packageRoot.appendingPathComponent("Tests/ReceiptDomainTests/Fixtures")
    /// The original transaction id the fixtures' subscriptions share (replaced per fixture: the table's
    /// `original_transaction_id` is unique).
    static let sharedOTID = "1000000811111111"

    /// One answer of a verifyReceipt endpoint: a body with its HTTP status and headers, or a transport failure.
    struct Answer: Sendable {
        var httpStatus = 200
        var headers: [(String, String)] = []
        var body: [UInt8] = []
        var transport: TransportFailure?

        /// How the loopback server delivers it.
        var response: LoopbackHTTPServer.Response {
            switch transport {
            case .timeout?:
                return .unanswered
            case .connectionReset?:
                // The head and half the body, then the connection closes.
                let body = Array(String(repeating: " ", count: 256).utf8)
                return LoopbackHTTPServer.Response(
                    status: 200,
                    headers: [],
                    body: body,
                    delivery: .cutAfter(bytes: 128)
                )
            case .responseTooLarge?:
                // One byte over the verifyReceipt client's cap.
                let cap = VerifyReceiptEndpoints(production: "", sandbox: "", password: nil).maxResponseBytes
                return LoopbackHTTPServer.Response(
                    status: 200,
                    headers: [],
                    body: [UInt8](repeating: 0x20, count: cap + 1)
                )
            default:
                return LoopbackHTTPServer.Response(
                    status: httpStatus,
                    headers: [("Content-Type", "application/json")] + headers,
                    body: body
                )
            }
        }

        /// A fault rather than a body `explain --response` could be given.
        var isFault: Bool { transport != nil || httpStatus != 200 }

        /// The server never answers: the client's request timeout ends each attempt.
        var isUnanswered: Bool {
            if case .timeout? = transport { true } else { false }
        }
    }

    /// One subscription: its row and what verifyReceipt answers for its receipt on each endpoint.
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var otid: String
        var productId: String
        var receipt: String
        /// The endpoint the run asks first (the row's environment), and `explain`'s `--environment`.
        var startEnvironment: AppleEnvironment
        /// The same on both endpoints for fixtures; nil for simulator cases until the run recorded them.
        var answer: Answer?
        var description: String { name }
    }

    // MARK: The fixtures

    static func fixtureCases() throws -> [Case] {
        let names = try FileManager.default.contentsOfDirectory(atPath: fixtureDirectory.path)
            .filter { $0.hasSuffix(".expect.json") }.map { String($0.dropLast(".expect.json".count)) }.sorted()
        return try names.enumerated().map { index, name in
            let sidecarURL = fixtureDirectory.appendingPathComponent(name + ".expect.json")
            guard let sidecar = try JSONSerialization.jsonObject(with: Data(contentsOf: sidecarURL)) as? [String: Any]
            else { throw FixtureError("\(name): unreadable sidecar") }
            let stored = sidecar["stored"] as? [String: Any]
            // Same length as the shared id, so nothing else in the body moves.
            let otid = "9876" + String(format: "%012d", index)
            var body: [UInt8] = []
            if let file = sidecar["body"] as? String {
                let text = String(
                    decoding: try Data(contentsOf: fixtureDirectory.appendingPathComponent(file)),
                    as: UTF8.self
                )
                let fixtureOTID = stored?["original_transaction_id"] as? String ?? sharedOTID
                body = Array(text.replacingOccurrences(of: fixtureOTID, with: otid).utf8)
            }
            let headers = (sidecar["headers"] as? [String: String] ?? [:]).sorted { $0.key < $1.key }.map {
                ($0.key, $0.value)
            }
            let transport: TransportFailure? =
                switch sidecar["transport"] as? String {
                case "timeout": .timeout
                case "connectionReset": .connectionReset
                case "responseTooLarge": .responseTooLarge
                case nil: nil
                case let other?: .other(other)
                }
            return Case(
                name: name,
                otid: otid,
                productId: stored?["product_id"] as? String ?? "com.example.reader.monthly",
                receipt: "rcpt-\(name)",
                startEnvironment: (sidecar["requested_environment"] as? String).flatMap(
                    AppleEnvironment.init(rawValue:)
                )
                    ?? .production,
                answer: Answer(
                    httpStatus: sidecar["http_status"] as? Int ?? 200,
                    headers: headers,
                    body: body,
                    transport: transport
                )
            )
        }
    }

    // MARK: The simulator's scenarios

    /// One subscription of every scenario in the simulator's export (its own enumeration: `truth.jsonl`), with
    /// the receipt the app stored (`purchases.jsonl`).
    static func simulatorCases(exportedTo directory: URL) throws -> [Case] {
        func lines(_ file: String) throws -> [[String: Any]] {
            try JSONLines.read(directory.appendingPathComponent(file))
        }
        var purchases: [String: [String: Any]] = [:]
        for purchase in try lines("purchases.jsonl") {
            if let otid = purchase["original_transaction_id"] as? String { purchases[otid] = purchase }
        }
        var cases: [String: Case] = [:]
        for truth in try lines("truth.jsonl") {
            guard let scenario = truth["scenario"] as? String, cases["simulator \(scenario)"] == nil,
                let otid = truth["original_transaction_id"] as? String, let purchase = purchases[otid],
                let receipt = purchase["latest_receipt"] as? String
            else { continue }
            cases["simulator \(scenario)"] = Case(
                name: "simulator \(scenario)",
                otid: otid,
                productId: purchase["product_id"] as? String ?? "",
                receipt: receipt,
                startEnvironment: .production
            )
        }
        return cases.values.sorted { $0.name < $1.name }
    }

    // MARK: explain

    /// What `explain` concludes for `answers` (the answer of each endpoint the run asked, in order).
    static func explained(_ testCase: Case, answers: [AppleEnvironment: Answer]) -> StoredConclusion {
        var environment = testCase.startEnvironment
        var switched = false
        while let answer = answers[environment] {
            if answer.isFault {
                let verdict = VerifyClassifier.classify(
                    transportFailure: answer.transport,
                    httpStatus: answer.httpStatus,
                    header: { name in answer.headers.first { $0.0.lowercased() == name.lowercased() }?.1 },
                    body: answer.body,
                    requestedEnvironment: environment,
                    now: now
                )
                return conclusion(of: verdict, decision: nil, fields: [:])
            }
            let report: ExplainReport
            do {
                report = try ExplainReport.build(
                    body: answer.body,
                    sourceName: testCase.name,
                    originalTransactionId: testCase.otid,
                    bundleId: bundleId,
                    now: now,
                    environment: environment
                )
            } catch {
                // explain refuses what is not a verifyReceipt answer (exit 64); the run retries it.
                return StoredConclusion(
                    ending: error.code == .unreadable ? .unresolved : .rejected,
                    code: error.code == .unreadable
                        ? VerdictReason.Code.malformedResponse.rawValue : error.code.rawValue
                )
            }
            if case .switchEnvironment(let target) = report.verdict, !switched {
                switched = true
                environment = target
                continue
            }
            var fields: [String: String] = [:]
            for field in report.fields {
                switch field.value {
                case .string(let text), .number(let text): fields[field.key] = text
                case .bool(let flag): fields[field.key] = String(flag)
                default: break
                }
            }
            return conclusion(of: report.verdict, decision: report.decision, fields: fields)
        }
        return StoredConclusion(ending: .unresolved, code: "no answer recorded from \(environment)")
    }

    /// The ending `explain`'s verdict and decision name, with the values it printed.
    static func conclusion(of verdict: VerifyVerdict, decision: Decision?, fields: [String: String]) -> StoredConclusion
    {
        if let decision {
            guard decision.outcome == .rejected else {
                var values: [String: String] = [:]
                for key in StoredConclusion.storedKeys { values[key] = fields[key] }
                return StoredConclusion(ending: .stored, values: values)
            }
            return StoredConclusion(ending: .rejected, code: decision.rejectReason?.code.rawValue)
        }
        let code = verdict.reason?.code.rawValue
        switch verdict {
        case .ok, .switchEnvironment: return StoredConclusion(ending: .unresolved, code: "\(verdict.name) undecided")
        case .reject: return StoredConclusion(ending: .rejected, code: code)
        case .configError: return StoredConclusion(ending: .configurationError, code: code)
        case .unresolved: return StoredConclusion(ending: .unresolved, code: code)
        case .retry(let reason, _):
            // After the run's attempts: every one 21002 makes the receipt invalid, anything else leaves it.
            if reason.code == .receiptMalformedOrTemporary {
                return StoredConclusion(ending: .rejected, code: VerdictReason.Code.invalidReceipt.rawValue)
            }
            return StoredConclusion(ending: .unresolved, code: code)
        }
    }

    // MARK: The run

    /// What the loopback verifyReceipt saw and answered.
    final class Exchanges: Sendable {
        private let recorded = Mutex<[String: [AppleEnvironment: Answer]]>([:])
        private let counts = Mutex<[String: Int]>([:])

        func record(_ receipt: String, _ environment: AppleEnvironment, _ answer: Answer) {
            recorded.withLock { $0[receipt, default: [:]][environment] = answer }
            counts.withLock { $0[receipt, default: 0] += 1 }
        }
        func answers(_ receipt: String) -> [AppleEnvironment: Answer] { recorded.withLock { $0[receipt] ?? [:] } }
        func requests(_ receipt: String) -> Int { counts.withLock { $0[receipt] ?? 0 } }
    }

    /// Passes a request on to the simulator and returns its answer (on the loopback server's connection thread).
    static func forward(_ body: [UInt8], to url: String, http: CurlHTTPClient) -> Answer {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Answer?>(nil)
        let request = HTTPRequest(
            url: url,
            method: .post,
            headers: [("Content-Type", "application/json")],
            body: Data(body),
            // A safety net, as the run's own (`run`).
            connectTimeout: .seconds(600),
            totalTimeout: .seconds(600)
        )
        http.execute(request) { outcome in
            let answer: Answer =
                switch outcome {
                case .success(let response): Answer(httpStatus: response.status, body: [UInt8](response.body))
                case .failure: Answer(transport: .connectionFailed)
                }
            result.withLock { $0 = answer }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 } ?? Answer(transport: .connectionFailed)
    }

    struct RunResult {
        var summary: ReconciliationRunner.Summary
        var conclusions: [String: StoredConclusion]
        var exchanges: Exchanges
    }

    /// One backfill run over `cases`, one fresh row each, against a loopback verifyReceipt that answers fixtures from
    /// their files and passes the simulator's receipts on to `simulator`. The request timeout is 2 s for cases whose
    /// server never answers (each attempt then waits for it) and a safety net for the others: on a busy machine an
    /// answer can take longer than 2 s, and one attempt timed out among a malformed receipt's 21002 answers would
    /// leave it unresolved instead of rejected.
    static func run(_ cases: [Case], simulator: SimulatorProcess?) throws -> RunResult {
        let world = try StoreWorld()
        var ids: [String: Int64] = [:]
        for testCase in cases {
            ids[testCase.name] = try world.insertSubscription(
                testCase.otid,
                expiresAt: nil,
                productId: testCase.productId,
                receipt: testCase.receipt,
                environment: testCase.startEnvironment == .sandbox ? AppleEnvironment.sandbox.rawValue : nil
            )
        }
        let byReceipt = Dictionary(cases.map { ($0.receipt, $0) }, uniquingKeysWith: { first, _ in first })
        let exchanges = Exchanges()
        let http = CurlHTTPClient()
        defer { http.shutdown() }
        let server = try ScriptedAppleServer { receipt, environment, body in
            guard let testCase = byReceipt[receipt] else { return .json("{\"status\": 21002}") }
            let answer: Answer
            if let scripted = testCase.answer {
                answer = scripted
            } else if let simulator {
                let url = environment == .sandbox ? simulator.sandboxURL : simulator.productionURL
                answer = forward(body, to: url, http: http)
            } else {
                answer = Answer(transport: .connectionFailed)
            }
            exchanges.record(receipt, environment, answer)
            return answer.response
        }
        defer { server.stop() }
        var options = RunOptions()
        options.rate = 1000
        options.concurrency = 16
        options.maxAttempts = maxAttempts
        options.backoffBaseSeconds = 0.01
        options.backoffCapSeconds = 0.05
        options.maxRetryAfterSeconds = 1
        options.requestTimeoutSeconds = cases.allSatisfy { $0.answer?.isUnanswered == true } ? 2 : 600
        options.maxUnresolvedFraction = 1
        options.outageFailures = 0
        var request = ReconciliationRunner.Request(
            mode: .backfill,
            selection: .backfill(BackfillFilter(all: true)),
            options: options,
            apps: [
                AppDefinition(
                    bundleId: bundleId,
                    credentials: .verifyReceipt(
                        AppleConfiguration(
                            productionURL: server.productionURL,
                            sandboxURL: server.sandboxURL,
                            sharedSecret: Secret(simulator?.sharedSecret ?? "parity-secret"),
                            bundleId: bundleId
                        )
                    )
                )
            ]
        )
        request.now = now
        let logger = Logger(label: "parity", factory: { _ in SwiftLogNoOpLogHandler() })
        let summary = try ReconciliationRunner(connectionString: world.database.url, logger: logger).run(request)
        var conclusions: [String: StoredConclusion] = [:]
        for (name, id) in ids {
            conclusions[name] = try StoredConclusion.read(subscription: id, from: world.connection)
        }
        return RunResult(summary: summary, conclusions: conclusions, exchanges: exchanges)
    }

    /// `explain`'s conclusion and the run's for every case; returns how many agreed.
    @discardableResult
    static func compare(_ cases: [Case], _ result: RunResult) -> Int {
        var agreed = 0
        for testCase in cases {
            let answers =
                testCase.answer.map { [.production: $0, .sandbox: $0] } ?? result.exchanges.answers(testCase.receipt)
            let explainedConclusion = explained(testCase, answers: answers)
            guard let ran = result.conclusions[testCase.name] else {
                Issue.record("\(testCase): the run left no item")
                continue
            }
            // explain prints no product for 21010 (it has no stored row): the run keeps the row's.
            var comparable = ran
            // The item of a run stopped as a configuration error is left unresolved, the row untouched.
            if result.summary.exitCode == .configuration, ran.ending == .unresolved {
                comparable.ending = .configurationError
            }
            if explainedConclusion.ending == .stored, explainedConclusion.values["product_id"] == nil {
                comparable.values["product_id"] = nil
            }
            #expect(explainedConclusion == comparable, "\(testCase): explain \(explainedConclusion); the run \(ran)")
            if explainedConclusion == comparable { agreed += 1 }
            if explainedConclusion.ending == .unresolved || explainedConclusion.code == "invalid_receipt" {
                // Retried until the budget, unless Apple asked to wait longer than the run allows.
                #expect(result.exchanges.requests(testCase.receipt) >= 1)
            }
        }
        return agreed
    }

    @Test func everyFixtureAndSimulatorScenarioIsStoredAsExplainSays() async throws {
        let all = try Self.fixtureCases()
        #expect(all.count >= 80)
        // A configuration error stops the run: those fixtures get a run each, below.
        let stopping = all.filter {
            Self.explained($0, answers: [.production: $0.answer!, .sandbox: $0.answer!]).ending == .configurationError
        }
        let fixtures = all.filter { one in !stopping.contains { $0.name == one.name } }

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parity-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let population = ["--bundle-id", Self.bundleId]
        try await SimulatorProcess.exported(
            binary: BuiltBinary.simulator,
            seed: 28,
            subscriptions: 1500,
            now: Self.now,
            into: directory.path,
            extra: population
        )
        let simulated = try Self.simulatorCases(exportedTo: directory)
        #expect(simulated.count >= 30, "\(simulated.map(\.name))")
        let simulator = try await SimulatorProcess.started(
            binary: BuiltBinary.simulator,
            arguments: ["--seed", "28", "--subscriptions", "1500", "--now", RFC3339.string(Self.now)] + population,
            sharedSecret: "parity-simulator-secret"
        )
        defer { simulator.signal(SIGKILL) }

        let cases = fixtures + simulated
        // Those whose server never answers in a run of their own (`run`: the request timeouts).
        var agreed = 0
        for part in [
            cases.filter { $0.answer?.isUnanswered == true }, cases.filter { $0.answer?.isUnanswered != true },
        ] {
            let result = try Self.run(part, simulator: simulator)
            #expect(result.summary.exitCode == .success, "\(result.summary.message ?? "")")
            agreed += Self.compare(part, result)
        }

        var stoppedAgreeing = 0
        for testCase in stopping {
            let stopped = try Self.run([testCase], simulator: nil)
            #expect(stopped.summary.exitCode == .configuration, "\(testCase): \(stopped.summary.message ?? "")")
            stoppedAgreeing += Self.compare([testCase], stopped)
        }
        print("verifyReceipt decision parity: \(agreed + stoppedAgreeing) of \(cases.count + stopping.count) agree")
    }
}
