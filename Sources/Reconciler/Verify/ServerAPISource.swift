import AppStoreClient
import AppStoreSignedData
import Foundation
import Logging
import ReceiptDomain

/// The App Store Server API as an `AppleSource`: per subscription, Get All Subscription Statuses by its
/// original transaction id (the row's environment first, else production; the other one once on 4040010),
/// Get Transaction History v2 only when the ledger does not yet hold what the status shows (all pages the
/// first time, then from the newest purchase already read), every JWS verified before anything is believed,
/// decisions by the same `DecisionEngine` rules as verifyReceipt (docs/decision-rules.md, "The App Store
/// Server API"). A 401 stops the run as a configuration error (exit 78) at once.
public final class ServerAPISource: AppleSource, @unchecked Sendable {
    let client: ServerAPIClient
    let budgets: ServerAPIBudgets
    let maxAttempts: Int
    let bundleId: String
    let logger: Logger
    /// The instant decisions are made at: the run's fixed `--now`, or the wall clock.
    let now: @Sendable () -> Date
    private let verifiers: [AppleEnvironment: SignedDataVerifier]

    public init(
        client: ServerAPIClient,
        budgets: ServerAPIBudgets,
        roots: TrustedRoots,
        bundleId: String,
        appAppleId: Int64?,
        maxAttempts: Int,
        logger: Logger,
        now: @escaping @Sendable () -> Date
    ) {
        self.client = client
        self.budgets = budgets
        self.bundleId = bundleId
        self.maxAttempts = maxAttempts
        self.logger = logger
        self.now = now
        let cache = ChainCache()
        var verifiers: [AppleEnvironment: SignedDataVerifier] = [:]
        for environment in AppleEnvironment.allCases {
            verifiers[environment] = SignedDataVerifier(
                roots: roots,
                options: SignedDataVerifier.Options(
                    bundleId: bundleId,
                    environment: environment == .production ? .production : .sandbox,
                    appAppleId: environment == .production ? appAppleId : nil
                ),
                cache: cache
            )
        }
        self.verifiers = verifiers
    }

    public func host(of request: SourceRequest) -> String {
        let url = request.environment == .sandbox ? client.endpoints.sandbox : client.endpoints.production
        return hostAndPort(of: url) ?? "App Store Server API"
    }

    public func verification(for item: WorkItem) -> any SourceVerification {
        ServerAPIVerification(source: self, item: item)
    }

    func verifier(_ environment: AppleEnvironment) -> SignedDataVerifier {
        verifiers[environment]!
    }
}
