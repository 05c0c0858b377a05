import AppStoreSignedData
import ArgumentParser
import CivilTime
import Foundation
import ReceiptDomain
import Reconciler

struct ExplainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Explain a saved Apple response, a signed App Store payload (JWS) or a stored receipt, offline.",
        discussion: """
            Reads a saved response (a file, or - for standard input) and prints one JSON object: apple_status, \
            environment, verdict (ok, retry, switch_environment, reject, config_error, unresolved), retryable, reason, \
            original_transaction_id, state, expires_at, product_id, latest_transaction_id, auto_renew, \
            auto_renew_product_id, expiration_intent, grace_period_expires_at, in_billing_retry, is_trial, \
            is_intro_offer, revoked_at, cancellation_reason (null where not applicable). Nothing is sent \
            anywhere and no database is needed.

            Without --original-transaction-id a receipt holding one subscription is explained; one holding \
            several is an error listing them. Use it to debug a customer's complaint:
              renewal-reconciler explain --response resp.json --bundle-id com.example.app --now 2026-11-21T00:00:00Z

            --response also accepts a Get All Subscription Statuses body (App Store Server API): each signed \
            transaction and renewal info is verified to Apple's root, and the same rules decide the state; the \
            output adds `verified` (exit 1 when false). With --history FILE (repeatable) the Get Transaction \
            History pages the run read for that subscription join the decision as they join the run's.

            --jws FILE verifies one App Store JWS (a signed transaction, renewal info, or notification; or a \
            notification request body {"signedPayload": ...}) and prints verified, reason (null or the \
            refusal's name: malformed, wrong_algorithm, chain_invalid, missing_apple_oid, \
            certificate_expired_at_signed_date, certificate_not_yet_valid_at_signed_date, bad_signature, \
            bundle_mismatch, environment_mismatch, app_apple_id_mismatch), detail, payload_type, header (alg, \
            the subject CN of each x5c certificate) and payload (dates RFC 3339 UTC). Exit 0 verified, 1 not.

            --receipt FILE reads the transaction ids out of a stored receipt (base64 app receipt, BER or DER, \
            or an iOS 6 transaction receipt) and prints bundle_id, kind, signature_checked (always false: the \
            receipt's signature is not checked) and in_app [{transaction_id, original_transaction_id, \
            product_id, purchase_date, expires_date}]. A bad receipt exits 64 naming the problem.

            Signed data is trusted to Apple Root CA - G3 (compiled in); --root-ca FILE (PEM or DER, repeatable) \
            or APPLE_ROOT_CA_FILE adds roots, --root-ca-only trusts only those (tests, the simulator).
            """
    )

    @Option(
        help: ArgumentHelp(
            "A saved verifyReceipt or Get All Subscription Statuses body (`-` for standard input).",
            valueName: "file"
        )
    )
    var response: String?

    @Option(
        help: ArgumentHelp(
            "A saved Get Transaction History page read after the --response statuses (repeatable, in order).",
            valueName: "file"
        )
    )
    var history: [String] = []

    @Option(
        help: ArgumentHelp(
            "A signed App Store payload (compact JWS) to verify (`-` for standard input).",
            valueName: "file"
        )
    )
    var jws: String?

    @Option(
        help: ArgumentHelp(
            "A stored receipt (base64) to read transaction ids from (`-` for standard input).",
            valueName: "file"
        )
    )
    var receipt: String?

    @Option(
        name: .customLong("root-ca"),
        help: ArgumentHelp("Also trust this root certificate (PEM or DER; repeatable).", valueName: "file")
    )
    var rootCA: [String] = []

    @Flag(
        name: .customLong("root-ca-only"),
        help: "Trust only the --root-ca / APPLE_ROOT_CA_FILE roots, not Apple's."
    )
    var rootCAOnly = false

    @Option(help: "The app's App Apple ID: a production notification for another app is refused.")
    var appAppleId: Int64?

    @Flag(help: "Check certificate validity now instead of at the payload's signedDate.")
    var validateChainNow = false

    @Option(help: "Which subscription in the receipt to explain.")
    var originalTransactionId: String?

    @Option(
        help: "The app's bundle id: a receipt of another app is rejected (default: APPLE_BUNDLE_ID, else not checked)."
    )
    var bundleId: String?

    @Option(help: ArgumentHelp("Decide the state as of this time (RFC 3339). Default: now.", valueName: "rfc3339"))
    var now: String?

    @Option(help: "The environment the response came from (Production or Sandbox), when the body does not say.")
    var environment: String?

    @Flag(help: "Print the JSON on one line.")
    var compact = false

    func validate() throws {
        let inputs = [response, jws, receipt].compactMap { $0 }
        guard inputs.count == 1 else {
            throw ValidationError("give exactly one of --response, --jws, --receipt")
        }
        if let now, RFC3339.parse(now) == nil {
            throw ValidationError("--now: \(now) is not an RFC 3339 timestamp with a zone (e.g. 2026-11-21T00:00:00Z)")
        }
        if !history.isEmpty, response == nil {
            throw ValidationError("--history goes with --response (a Get All Subscription Statuses body)")
        }
        if let environment, AppleEnvironment(appleValue: environment) == nil {
            throw ValidationError("--environment: expected Production or Sandbox, got \(environment)")
        }
    }

    func run() throws {
        if let jws {
            return explainJWS(jws)
        }
        if let receipt {
            return explainReceipt(receipt)
        }
        let response = self.response ?? "-"
        let body = read(response)
        let source = response == "-" ? "<stdin>" : response
        if SubscriptionStatusExplainer.recognizes([UInt8](body)) {
            return explainStatuses(body, source: source)
        }
        if !history.isEmpty {
            fail("\(source): --history goes with a Get All Subscription Statuses body, not a verifyReceipt answer")
        }
        do {
            let report = try ExplainReport.build(
                body: body,
                sourceName: source,
                originalTransactionId: originalTransactionId,
                bundleId: configuredBundleId,
                now: now.flatMap(RFC3339.parse) ?? Date(),
                environment: environment.flatMap(AppleEnvironment.init(appleValue:))
            )
            // The pretty form already ends with a newline; the compact one does not.
            print(report.jsonString(pretty: !compact), terminator: compact ? "\n" : "")
        } catch {
            // The domain's description already lists the candidates inline; list them once, as flags to copy.
            guard !error.candidates.isEmpty else { fail(error.description) }
            let choices = error.candidates.map {
                "  --original-transaction-id \($0.originalTransactionId)   (\($0.productId))"
            }
            fail(
                "\(error.source): the receipt holds \(error.candidates.count) subscriptions, choose one:\n"
                    + choices.joined(separator: "\n")
            )
        }
    }

    func fail(_ message: String, code: ReconcilerExitCode = .usage) -> Never {
        FileHandle.standardError.write(Data("renewal-reconciler explain: error: \(message)\n".utf8))
        Foundation.exit(code.rawValue)
    }
}
