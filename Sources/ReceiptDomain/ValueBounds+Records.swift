import Foundation

extension ValueBounds {
    /// The first value of `transaction` outside the bounds, named, or nil: what the verifyReceipt parser
    /// refuses, applied to transactions that arrive already decoded (App Store Server API payloads).
    public static func problem(in transaction: ReceiptTransaction) -> String? {
        let dates: [(String, Date?)] = [
            ("purchaseDate", transaction.purchaseDate), ("originalPurchaseDate", transaction.originalPurchaseDate),
            ("expiresDate", transaction.expiresDate), ("revocationDate", transaction.cancellationDate),
        ]
        let integers: [(String, Int?)] = [
            ("quantity", transaction.quantity), ("revocationReason", transaction.cancellationReason),
            ("offerType", transaction.signedFacts?.offerType),
        ]
        let texts: [(String, String?)] = [
            ("transactionId", transaction.transactionId), ("originalTransactionId", transaction.originalTransactionId),
            ("productId", transaction.productId), ("webOrderLineItemId", transaction.webOrderLineItemId),
            ("subscriptionGroupIdentifier", transaction.subscriptionGroupIdentifier),
            ("inAppOwnershipType", transaction.inAppOwnershipType), ("offerIdentifier", transaction.offerCodeRefName),
            ("promotionalOfferId", transaction.promotionalOfferId), ("currency", transaction.signedFacts?.currency),
            ("storefront", transaction.signedFacts?.storefront),
            ("offerDiscountType", transaction.signedFacts?.offerDiscountType),
            ("revocationType", transaction.signedFacts?.revocationType),
            ("transactionReason", transaction.signedFacts?.transactionReason),
            ("appAccountToken", transaction.appAccountToken), ("offerPeriod", transaction.signedFacts?.offerPeriod),
            ("appTransactionId", transaction.signedFacts?.appTransactionId),
            ("billingPlanType", transaction.signedFacts?.billingPlanType),
        ]
        if let problem = firstProblem(dates: dates, integers: integers, texts: texts) {
            return "transaction \(transaction.transactionId.prefix(40)): \(problem)"
        }
        if let price = transaction.signedFacts?.priceMilliunits, price < 0 || price > 1_000_000_000_000 {
            return "transaction \(transaction.transactionId.prefix(40)): price \(price) milliunits is implausible"
        }
        if let share = transaction.signedFacts?.revocationPercentage, !(0...100_000).contains(share) {
            return
                "transaction \(transaction.transactionId.prefix(40)): revocationPercentage \(share) is not 0...100000"
        }
        return nil
    }

    /// The first value of `renewal` outside the bounds, named, or nil.
    public static func problem(in renewal: PendingRenewalInfo) -> String? {
        if let price = renewal.renewalPriceMilliunits, price < 0 || price > 1_000_000_000_000 {
            return "renewal info: renewalPrice \(price) milliunits is implausible"
        }
        return firstProblem(
            dates: [("gracePeriodExpiresDate", renewal.gracePeriodExpiresDate)],
            integers: [
                ("expirationIntent", renewal.expirationIntent), ("priceIncreaseStatus", renewal.priceConsentStatus),
            ],
            texts: [
                ("autoRenewProductId", renewal.autoRenewProductId), ("productId", renewal.productId),
                ("originalTransactionId", renewal.originalTransactionId),
                ("offerIdentifier", renewal.offerCodeRefName ?? renewal.promotionalOfferId),
                ("currency", renewal.renewalCurrency), ("renewalBillingPlanType", renewal.renewalBillingPlanType),
                ("appAccountToken", renewal.appAccountToken), ("appTransactionId", renewal.appTransactionId),
            ]
        ).map { "renewal info: \($0)" }
    }

    private static func firstProblem(
        dates: [(String, Date?)],
        integers: [(String, Int?)],
        texts: [(String, String?)]
    ) -> String? {
        for (field, value) in dates {
            guard let value else { continue }
            let ms = (value.timeIntervalSince1970 * 1000).rounded()
            guard ms.isFinite, ms >= Double(earliestMilliseconds), ms < Double(latestMilliseconds) else {
                return "\(field) \(ms.isFinite ? String(format: "%.0f", ms) : "?") ms is outside 2008-07-01..2100-01-01"
            }
        }
        for (field, value) in integers {
            if let value, !integerRange.contains(value) { return "\(field) \(value) does not fit 32 bits" }
        }
        for (field, value) in texts {
            guard let value else { continue }
            if value.utf8.count > maxTextLength { return "\(field) has \(value.utf8.count) bytes" }
            if ValueBounds.containsNUL(value) { return "\(field) contains a NUL character" }
        }
        return nil
    }
}
