import ArgumentParser
import CivilTime
import Foundation
import ReceiptDomain
import Reconciler

struct ExplainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Explain a saved Apple verifyReceipt response: the verdict and the subscription's state.",
        discussion: """
            Reads a saved response (a file, or - for standard input) and prints one JSON object: apple_status, \
            environment, verdict (ok, retry, switch_environment, reject, config_error), retryable, reason, \
            original_transaction_id, state, expires_at, product_id, latest_transaction_id, auto_renew, \
            auto_renew_product_id, expiration_intent, grace_period_expires_at, in_billing_retry, is_trial, \
            is_intro_offer, revoked_at, cancellation_reason (null where not applicable). Nothing is sent \
            anywhere and no database is needed.

            Without --original-transaction-id a receipt holding one subscription is explained; one holding \
            several is an error listing them. Use it to debug a customer's complaint:
              renewal-reconciler explain --response resp.json --bundle-id com.example.app --now 2026-11-21T00:00:00Z
            """
    )

    @Option(help: ArgumentHelp("The saved response body (`-` for standard input).", valueName: "file"))
    var response: String

    @Option(help: "Which subscription in the receipt to explain.")
    var originalTransactionId: String?

    @Option(help: "The app's bundle id: a receipt of another app is rejected (default: APPLE_BUNDLE_ID, else not checked).")
    var bundleId: String?

    @Option(help: ArgumentHelp("Decide the state as of this time (RFC 3339). Default: now.", valueName: "rfc3339"))
    var now: String?

    @Option(help: "The environment the response came from (Production or Sandbox), when the body does not say.")
    var environment: String?

    @Flag(help: "Print the JSON on one line.")
    var compact = false

    func validate() throws {
        if let now, RFC3339.parse(now) == nil {
            throw ValidationError("--now: \(now) is not an RFC 3339 timestamp with a zone (e.g. 2026-11-21T00:00:00Z)")
        }
        if let environment, AppleEnvironment(appleValue: environment) == nil {
            throw ValidationError("--environment: expected Production or Sandbox, got \(environment)")
        }
    }

    func run() throws {
        let body: Data
        if response == "-" {
            body = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard FileManager.default.fileExists(atPath: response) else {
                fail("\(response): no such file")
            }
            guard let data = FileManager.default.contents(atPath: response) else {
                fail("\(response): cannot read the file")
            }
            body = data
        }
        let source = response == "-" ? "<stdin>" : response
        do {
            let report = try ExplainReport.build(
                body: body, sourceName: source, originalTransactionId: originalTransactionId,
                bundleId: bundleId ?? ProcessInfo.processInfo.environment["APPLE_BUNDLE_ID"].flatMap { $0.isEmpty ? nil : $0 },
                now: now.flatMap(RFC3339.parse) ?? Date(),
                environment: environment.flatMap(AppleEnvironment.init(appleValue:)))
            // The pretty form already ends with a newline; the compact one does not.
            print(report.jsonString(pretty: !compact), terminator: compact ? "\n" : "")
        } catch {
            // The domain's description already lists the candidates inline; list them once, as flags to copy.
            guard !error.candidates.isEmpty else { fail(error.description) }
            let choices = error.candidates.map { "  --original-transaction-id \($0.originalTransactionId)   (\($0.productId))" }
            fail(
                "\(error.source): the receipt holds \(error.candidates.count) subscriptions, choose one:\n"
                    + choices.joined(separator: "\n"))
        }
    }

    private func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("renewal-reconciler explain: error: \(message)\n".utf8))
        Foundation.exit(ReconcilerExitCode.usage.rawValue)
    }
}
