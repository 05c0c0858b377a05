import AppStoreSignedData
import ArgumentParser
import CivilTime
import Foundation
import ReceiptDomain
import Reconciler

/// The offline explain forms for the App Store Server API's data: `--jws`, `--receipt`, and `--response`
/// with a Get All Subscription Statuses body (docs/signed-data.md).
extension ExplainCommand {
    var configuredBundleId: String? {
        bundleId ?? ProcessInfo.processInfo.environment["APPLE_BUNDLE_ID"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A file's bytes, or standard input for `-`; exit 64 naming the file when it cannot be read.
    func read(_ path: String) -> Data {
        if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        guard FileManager.default.fileExists(atPath: path) else { fail("\(path): no such file") }
        guard let data = FileManager.default.contents(atPath: path) else { fail("\(path): cannot read the file") }
        return data
    }

    /// The verifier for signed data: trusted roots from --root-ca / APPLE_ROOT_CA_FILE (exit 78 when unusable),
    /// the payloads' environment `--environment` (or `expected`, when given: the run's verifier per environment).
    func signedDataVerifier(expecting expected: AppStoreEnvironment? = nil) -> SignedDataVerifier {
        let roots: TrustedRoots
        do {
            roots = try TrustedRootsConfiguration.load(flagFiles: rootCA, only: rootCAOnly)
        } catch {
            fail("\(error)", code: .configuration)
        }
        let expected = expected ?? environment.flatMap(AppStoreEnvironment.init(appleValue:))
        return SignedDataVerifier(
            roots: roots,
            options: .init(
                bundleId: configuredBundleId,
                environment: expected,
                // As the run's verifiers: production signed data must carry the App Apple ID, sandbox data need not.
                appAppleId: expected == .sandbox ? nil : appAppleId,
                validationTime: validateChainNow ? .now : .signedDate
            )
        )
    }

    func explainJWS(_ path: String) {
        let text = String(decoding: read(path), as: UTF8.self)
        let outcome = SignedPayloadExplainer.explain(text: text, verifier: signedDataVerifier())
        print(outcome.json.text(pretty: !compact), terminator: compact ? "\n" : "")
        if !outcome.verified { Foundation.exit(ReconcilerExitCode.failure.rawValue) }
    }

    func explainReceipt(_ path: String) {
        let source = path == "-" ? "<stdin>" : path
        do {
            let json = try StoredReceiptExplainer.explain(contents: [UInt8](read(path)))
            print(json.text(pretty: !compact), terminator: compact ? "\n" : "")
        } catch {
            fail("\(source): \(error.description)")
        }
    }

    func explainStatuses(_ body: Data, source: String) {
        do {
            let outcome = try SubscriptionStatusExplainer.explain(
                body: [UInt8](body),
                history: history.map { [UInt8](read($0)) },
                sourceName: source,
                verifier: { signedDataVerifier(expecting: $0 == .production ? .production : .sandbox) },
                environment: environment.flatMap(AppleEnvironment.init(appleValue:)),
                originalTransactionId: originalTransactionId,
                bundleId: configuredBundleId,
                now: now.flatMap(RFC3339.parse) ?? Date()
            )
            print(outcome.json.text(pretty: !compact), terminator: compact ? "\n" : "")
            if !outcome.verified { Foundation.exit(ReconcilerExitCode.failure.rawValue) }
        } catch {
            guard !error.candidates.isEmpty else { fail(error.description) }
            let choices = error.candidates.map {
                "  --original-transaction-id \($0.originalTransactionId)   (\($0.productId))"
            }
            fail(
                "\(error.source): the response holds \(error.candidates.count) subscriptions, choose one:\n"
                    + choices.joined(separator: "\n")
            )
        }
    }
}
