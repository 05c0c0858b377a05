import AppStoreClient
import Foundation
import Logging
import ReceiptDomain

/// verifyReceipt as an `AppleSource`: one budget (`--rate`), the row's known environment first (else
/// production) with at most one switch (21007/21008), bounded retries (`VerificationAttempt`), decisions
/// by `DecisionEngine`, and the run-wide view of 21004 (`SharedSecretMismatchDetector`): one 21004 rejects
/// its receipt, systematic 21004s stop the run (docs/decision-rules.md).
public final class VerifyReceiptSource: AppleSource, @unchecked Sendable {
    public let budget: RateBudget
    let client: VerifyReceiptClient
    let maxAttempts: Int
    let bundleId: String?
    let logger: Logger
    /// The instant decisions are made at: the run's fixed `--now`, or the wall clock.
    let now: @Sendable () -> Date
    private let lock = NSLock()
    private var secretMismatches = SharedSecretMismatchDetector()

    public init(
        client: VerifyReceiptClient,
        rate: Double,
        maxAttempts: Int,
        bundleId: String?,
        app: String? = nil,
        logger: Logger,
        now: @escaping @Sendable () -> Date
    ) {
        self.client = client
        self.budget = RateBudget(name: "verifyReceipt", rate: rate, app: app)
        self.maxAttempts = maxAttempts
        self.bundleId = bundleId
        self.logger = logger
        self.now = now
    }

    public func verification(for item: WorkItem) -> any SourceVerification {
        VerifyReceiptVerification(source: self, item: item)
    }

    public func host(of request: SourceRequest) -> String {
        let url = request.environment == .sandbox ? client.endpoints.sandbox : client.endpoints.production
        return hostAndPort(of: url) ?? "verifyReceipt"
    }

    public func revise(_ result: ItemResult, afterConfigurationError reason: String) -> ItemResult {
        guard secretIsSystematic, case .rejected(let rejection, _) = result.kind,
            rejection.code == .sharedSecretMismatch
        else { return result }
        return ItemResult(
            item: result.item,
            kind: .unresolved(Self.secretLooksWrong(rejection)),
            environment: result.environment,
            appleStatus: result.appleStatus,
            attempts: result.attempts
        )
    }

    /// Feeds the 21004 detector with the status that finished an item; returns the evidence when this
    /// answer made the 21004s systematic.
    func noteFinalAppleStatus(_ status: Int) -> String? {
        lock.lock()
        defer { lock.unlock() }
        guard !secretMismatches.isSystematic, secretMismatches.record(appleStatus: status) else { return nil }
        return secretMismatches.evidence ?? ""
    }

    var secretIsSystematic: Bool {
        lock.lock()
        defer { lock.unlock() }
        return secretMismatches.isSystematic
    }

    /// The reason of a 21004 item once 21004s are systematic: not this receipt's fault.
    static func secretLooksWrong(_ reason: VerdictReason) -> String {
        "\(reason.code.rawValue): \(reason) (the shared secret looks wrong; run stopped)"
    }
}
