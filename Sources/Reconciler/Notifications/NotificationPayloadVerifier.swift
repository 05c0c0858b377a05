import AppStoreSignedData
import Foundation
import ReceiptDomain

/// Verifies one notification's `signedPayload` and the `signedTransactionInfo` inside it
/// (docs/signed-data.md, section 1) and reads the columns stored for it. A refusal is a `SignedDataError`
/// whose description names the check that failed and never holds the payload.
public struct NotificationPayloadVerifier: Sendable {
    let verifier: SignedDataVerifier

    /// `environment` nil accepts Production and Sandbox payloads (an import holds both); the App Apple ID
    /// is checked on production payloads.
    public init(
        roots: TrustedRoots,
        bundleId: String,
        appAppleId: Int64?,
        environment: AppStoreEnvironment?,
        cache: ChainCache = ChainCache()
    ) {
        verifier = SignedDataVerifier(
            roots: roots,
            options: SignedDataVerifier.Options(bundleId: bundleId, environment: environment, appAppleId: appAppleId),
            cache: cache
        )
    }

    /// True unless Apple's transaction `type` says it is not an auto-renewable subscription (an absent type, as in
    /// payloads before it existed, counts as one).
    static func namesSubscription(_ transaction: JWSTransactionDecodedPayload) -> Bool {
        transaction.type.map { $0 == "Auto-Renewable Subscription" } ?? true
    }

    public func verify(_ signedPayload: String) throws(SignedDataError) -> VerifiedNotification {
        let payload = try verifier.verifyNotification(signedPayload)
        guard let uuid = payload.notificationUUID, !uuid.isEmpty, uuid.count <= 200 else {
            throw SignedDataError(.malformed, "the notification has no notificationUUID")
        }
        guard let type = payload.notificationType, !type.isEmpty else {
            throw SignedDataError(.malformed, "the notification has no notificationType")
        }
        let environment = payload.environment
        if let environment,
            AppStoreEnvironment(appleValue: environment).map({ $0 == .production || $0 == .sandbox })
                != true
        {
            throw SignedDataError(
                .environmentMismatch,
                "environment \(environment.prefix(40)) is not Production or Sandbox"
            )
        }
        var transaction: JWSTransactionDecodedPayload?
        if let signedTransaction = payload.data?.signedTransactionInfo {
            do {
                transaction = try verifier.verifyTransaction(signedTransaction)
            } catch {
                throw SignedDataError(error.code, "signedTransactionInfo: \(error.detail)")
            }
        }
        if let signedAppTransaction = payload.appData?.signedAppTransactionInfo {
            // Every JWS inside is Apple's or the notification is refused (docs/signed-data.md, section 1).
            do {
                _ = try verifier.verify(signedAppTransaction)
            } catch {
                throw SignedDataError(error.code, "signedAppTransactionInfo: \(error.detail)")
            }
        }
        var verified = VerifiedNotification(
            notificationUUID: uuid,
            notificationType: type,
            subtype: payload.subtype,
            environment: environment,
            bundleId: payload.bundleId,
            // A consumable, non-consumable or non-renewing purchase (ONE_TIME_CHARGE, or its REFUND) names no
            // subscription: nothing to make due, and no "unknown subscription" in the report.
            originalTransactionId: transaction.flatMap { Self.namesSubscription($0) ? $0.originalTransactionId : nil },
            transactionId: transaction?.transactionId,
            productId: transaction?.productId ?? payload.summary?.productId,
            signedDate: payload.signedDate,
            signedPayload: signedPayload
        )
        if let transaction, let jws = payload.data?.signedTransactionInfo {
            verified.oneTimePurchase = try Self.oneTimePurchase(transaction, jws: jws)
        }
        return verified
    }

    /// A transaction Apple's `type` says is not a subscription's, as a ledger row (docs/reports.md, "One-time
    /// purchases"); a value outside the bounds refuses the notification like any other answer.
    static func oneTimePurchase(
        _ transaction: JWSTransactionDecodedPayload,
        jws: String
    ) throws(SignedDataError) -> LedgerEntry? {
        guard !namesSubscription(transaction), let t = SignedDataMapping.transaction(transaction, jws: jws) else {
            return nil
        }
        if let problem = ValueBounds.problem(in: t) {
            throw SignedDataError(.malformed, "signedTransactionInfo: \(problem)")
        }
        var entry = LedgerEntry(
            transactionId: t.transactionId,
            originalTransactionId: t.originalTransactionId,
            productId: t.productId,
            purchaseDate: t.purchaseDate,
            expiresDate: t.expiresDate,
            kind: t.isRefunded ? .refund : .oneTime,
            replacedByUpgrade: false,
            isTrial: false,
            isIntroOffer: false,
            offer: t.offerCodeRefName ?? t.promotionalOfferId,
            cancellationDate: t.cancellationDate,
            cancellationReason: t.cancellationReason,
            webOrderLineItemId: nil,
            subscriptionGroupIdentifier: nil,
            ownershipType: t.inAppOwnershipType
        )
        entry.signedFacts = t.signedFacts
        return entry
    }
}
