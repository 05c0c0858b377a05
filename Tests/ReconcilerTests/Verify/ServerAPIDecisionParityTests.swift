import AppStoreClient
import AppStoreSignedData
import CivilTime
import Crypto
import CurlHTTP
import Foundation
import Logging
import ReceiptDomain
import SignedDataTestSupport
import TestSupport
import Testing

@testable import Reconciler

/// `explain` prints what the run would store (docs/decision-rules.md, "Precedence"): each Get All Subscription
/// Statuses answer below goes through `explain --response`'s explainer and through an in-process run (the pipeline,
/// the App Store Server API source and its HTTP client against a loopback server answering the same bytes), and
/// both must reach the same verdict, state, expiry and revocation, and the state Apple's documentation gives
/// (written before either ran): Apple's status against the dates, signed data over the unsigned status, the
/// envelope's environment against the signed one, bounds on every value.
@Suite struct ServerAPIDecisionParityTests {
    static let pki = try! TestPKI()
    static let appAppleId: Int64 = 1_234_567_890
    /// 2026-11-25T00:00:00Z, four days after the payloads' signedDate.
    static let now = Date(timeIntervalSince1970: 1_795_564_800)
    static let future: Int64 = 1_797_592_000_000  // 2026-12-18
    static let past: Int64 = 1_795_300_000_000  // 2026-11-21T22:26:40Z

    struct Scenario: Sendable, CustomStringConvertible {
        var name: String
        var status: Int? = 1
        var expiresMs: Int64 = ServerAPIDecisionParityTests.future
        var revocationMs: Int64?
        var envelope = "Production"
        var payloadEnvironment = "Production"
        var bundleId = TestPayloads.bundleId
        /// Apple's documentation's answer: a state, or the reason code of a refusal.
        var expected: String
        var description: String { name }
    }

    static let scenarios: [Scenario] = [
        Scenario(name: "status 1, expiry ahead", expected: "active"),
        Scenario(name: "status 2 before the expiry date: Apple's status decides", status: 2, expected: "expired"),
        Scenario(name: "status 3", status: 3, expected: "billing_retry"),
        Scenario(name: "status 4", status: 4, expected: "grace_period"),
        Scenario(name: "status 5 without a revocation date", status: 5, expected: "revoked"),
        Scenario(name: "status 1 after the expiry date", expiresMs: past, expected: "active"),
        Scenario(name: "status 2 after the expiry date", status: 2, expiresMs: past, expected: "expired"),
        Scenario(name: "no status: the dates decide", status: nil, expected: "active"),
        Scenario(
            name: "status 1 beside a signed revocation: signed over unsigned",
            revocationMs: 1_795_200_000_000,
            expected: "revoked"
        ),
        Scenario(
            name: "status 5 with a signed revocation",
            status: 5,
            revocationMs: 1_795_200_000_000,
            expected: "revoked"
        ),
        Scenario(
            name: "envelope Production, signed Sandbox",
            payloadEnvironment: "Sandbox",
            expected: VerdictReason.Code.signedDataRefused.rawValue
        ),
        Scenario(
            name: "envelope Sandbox, signed Production",
            envelope: "Sandbox",
            expected: VerdictReason.Code.signedDataRefused.rawValue
        ),
        Scenario(name: "expiry before 1970", expiresMs: -1000, expected: VerdictReason.Code.implausibleValue.rawValue),
        Scenario(
            name: "expiry in 2150",
            expiresMs: 5_680_000_000_000,
            expected: VerdictReason.Code.implausibleValue.rawValue
        ),
        Scenario(
            name: "another app's signed data",
            bundleId: "com.example.other",
            expected: VerdictReason.Code.signedDataRefused.rawValue
        ),
    ]

    /// The original transaction id of scenario `index` (the in-memory store's ids: `10000000<n>`, n from 1).
    static func otid(_ index: Int) -> String { "10000000\(index + 1)" }

    static func transactionJWS(_ scenario: Scenario, otid: String) -> String {
        var extra: [String] = []
        if let revocation = scenario.revocationMs {
            extra += [
                #""revocationDate":\#(revocation)"#, #""revocationReason":1"#, #""revocationType":"REFUND_FULL""#,
            ]
        }
        return pki.jws(
            payload: TestPayloads.transaction(
                transactionId: String(Int64(otid)! + 1),
                originalTransactionId: otid,
                bundleId: scenario.bundleId,
                environment: scenario.payloadEnvironment,
                purchaseMs: scenario.expiresMs - 2_592_000_000,
                expiresMs: scenario.expiresMs,
                extra: extra
            )
        )
    }

    static func statusBody(_ scenario: Scenario, otid: String) -> String {
        let renewal = pki.jws(
            payload: TestPayloads.renewalInfo(originalTransactionId: otid, environment: scenario.payloadEnvironment)
        )
        let status = scenario.status.map { "\"status\":\($0)," } ?? ""
        return """
            {"environment":"\(scenario.envelope)","bundleId":"\(TestPayloads.bundleId)","appAppleId":\(appAppleId),
             "data":[{"subscriptionGroupIdentifier":"21000001","lastTransactions":[{\(status)
               "originalTransactionId":"\(otid)","signedTransactionInfo":"\(transactionJWS(scenario, otid: otid))",
               "signedRenewalInfo":"\(renewal)"}]}]}
            """
    }

    static func historyBody(_ scenario: Scenario, otid: String) -> String {
        """
        {"revision":"r1","hasMore":false,"bundleId":"\(TestPayloads.bundleId)","appAppleId":\(appAppleId),
         "environment":"\(scenario.envelope)","signedTransactions":["\(transactionJWS(scenario, otid: otid))"]}
        """
    }

    static func verifier(_ environment: AppleEnvironment) -> SignedDataVerifier {
        SignedDataVerifier(
            roots: TrustedRoots([pki.root]),
            options: .init(
                bundleId: TestPayloads.bundleId,
                environment: environment == .production ? .production : .sandbox,
                appAppleId: environment == .production ? appAppleId : nil
            )
        )
    }

    /// What `explain` concludes: the verdict, then the state or the reason.
    struct Conclusion: Equatable, CustomStringConvertible {
        var verdict: String
        var stateOrReason: String
        var expiresAt: String?
        var revokedAt: String?
        var description: String {
            "\(verdict) \(stateOrReason) expires \(expiresAt ?? "-") revoked \(revokedAt ?? "-")"
        }
    }

    static func explained(_ index: Int) throws -> (Conclusion, reason: String?) {
        let otid = otid(index)
        let outcome = try SubscriptionStatusExplainer.explain(
            body: Array(statusBody(scenarios[index], otid: otid).utf8),
            sourceName: "scenario",
            verifier: verifier,
            environment: nil,
            originalTransactionId: otid,
            bundleId: TestPayloads.bundleId,
            now: now
        )
        guard case .object(let members) = outcome.json else { throw FixtureError("explain printed no object") }
        func text(_ key: String) -> String? {
            guard case .string(let value)? = members.first(where: { $0.0 == key })?.1 else { return nil }
            return value
        }
        let verdict = text("verdict") ?? "?"
        let reason = text("reason")
        // The reason's code: the one whose summary the printed reason starts with.
        let code = reason.flatMap { text in
            VerdictReason.Code.allCases.first { text.hasPrefix(VerdictReason($0).summary) }
        }
        return (
            Conclusion(
                verdict: verdict,
                stateOrReason: verdict == "ok" ? text("state") ?? "?" : code?.rawValue ?? reason ?? "?",
                expiresAt: verdict == "ok" ? text("expires_at") : nil,
                revokedAt: verdict == "ok" ? text("revoked_at") : nil
            ),
            reason
        )
    }

    static func ranInProcess() throws -> [Int: (Conclusion, reason: String?)] {
        let server = try LoopbackHTTPServer { request in
            let parts = request.path.split(separator: "?")[0].split(separator: "/")
            guard let otid = parts.last.map(String.init),
                let index = (0..<scenarios.count).first(where: { Self.otid($0) == otid })
            else { return .json("{\"errorCode\":4040010}", status: 404) }
            let isHistory = request.path.contains("/v2/history/")
            return .json(
                isHistory ? historyBody(scenarios[index], otid: otid) : statusBody(scenarios[index], otid: otid)
            )
        }
        defer { server.stop() }
        let http = CurlHTTPClient()
        defer { http.shutdown() }
        let signer = try APITokenSigner(
            key: try APIPrivateKey(pem: P256.Signing.PrivateKey().pemRepresentation),
            keyId: "ABC123DEFG",
            issuerId: "57246542-96fe-1a63-e053-0824d011072a",
            scope: .appStoreServer(bundleId: TestPayloads.bundleId)
        )
        let client = ServerAPIClient(
            http: http,
            endpoints: ServerAPIEndpoints(production: server.baseURL, sandbox: server.baseURL + "/sandbox"),
            signer: signer
        )
        let logger = Logger(label: "parity", factory: { _ in SwiftLogNoOpLogHandler() })
        let source = ServerAPISource(
            client: client,
            budgets: ServerAPIBudgets(statuses: 500, history: 500),
            roots: TrustedRoots([pki.root]),
            bundleId: TestPayloads.bundleId,
            appAppleId: appAppleId,
            maxAttempts: 2,
            logger: logger,
            now: { now }
        )
        var options = RunOptions()
        options.rate = 500
        options.concurrency = 4
        let store = InMemoryPipelineStore(count: scenarios.count)
        let result = try ReconciliationPipeline(store: store, source: source, options: options, logger: logger).run()
        #expect(result.written == scenarios.count)
        var conclusions: [Int: (Conclusion, reason: String?)] = [:]
        for index in scenarios.indices {
            guard let written = store.written[Int64(index + 1)]?.first else { continue }
            switch written.kind {
            case .decided(let decision) where decision.outcome != .rejected:
                conclusions[index] = (
                    Conclusion(
                        verdict: "ok",
                        stateOrReason: decision.state?.rawValue ?? "?",
                        expiresAt: decision.expiresAt.map { RFC3339.string($0) },
                        revokedAt: decision.revokedAt.map { RFC3339.string($0) }
                    ), nil
                )
            case .rejected(let reason, _):
                conclusions[index] = (
                    Conclusion(verdict: "reject", stateOrReason: reason.code.rawValue), reason.description
                )
            default:
                conclusions[index] = (Conclusion(verdict: "other", stateOrReason: "\(written.kind)"), nil)
            }
        }
        return conclusions
    }

    @Test func explainAndTheRunConcludeTheSameAndAsAppleDocuments() throws {
        let run = try Self.ranInProcess()
        for (index, scenario) in Self.scenarios.enumerated() {
            let (explained, explainedReason) = try Self.explained(index)
            let ran = try #require(run[index], "\(scenario): the run wrote nothing")
            #expect(explained == ran.0, "\(scenario): explain \(explained), the run \(ran.0)")
            // The same words too, but where the run asked another environment than the envelope names (explain
            // can only take the envelope's word for it): both refuse, each naming what it compared.
            if scenario.envelope == "Production" {
                #expect(explainedReason == ran.reason, "\(scenario): reasons differ")
            }
            #expect(
                explained.stateOrReason == scenario.expected,
                "\(scenario): \(explained), Apple's answer \(scenario.expected)"
            )
        }
    }
}
