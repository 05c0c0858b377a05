import Foundation

/// JSON payloads shaped like the App Store's, for signing with `TestPKI`.
public enum TestPayloads {
    public static let bundleId = "com.example.reader"
    /// 2026-11-21T03:00:00Z in milliseconds.
    public static let signedDateMs: Int64 = 1_795_230_000_000

    /// A renewal of a monthly subscription. `extra` members are spliced in verbatim (`"price":1990`).
    public static func transaction(
        transactionId: String = "2000000811111203",
        originalTransactionId: String = "2000000811111111",
        bundleId: String = bundleId,
        environment: String = "Production",
        productId: String = "com.example.reader.monthly",
        purchaseMs: Int64 = 1_795_000_000_000,
        expiresMs: Int64 = 1_797_592_000_000,
        signedDateMs: Int64 = signedDateMs,
        extra: [String] = []
    ) -> String {
        var members = [
            #""transactionId":"\#(transactionId)""#, #""originalTransactionId":"\#(originalTransactionId)""#,
            #""webOrderLineItemId":"2000000099999999""#, #""bundleId":"\#(bundleId)""#,
            #""productId":"\#(productId)""#, #""subscriptionGroupIdentifier":"21000001""#,
            #""purchaseDate":\#(purchaseMs)"#, #""originalPurchaseDate":1790000000000"#,
            #""expiresDate":\#(expiresMs)"#, #""quantity":1"#, #""type":"Auto-Renewable Subscription""#,
            #""inAppOwnershipType":"PURCHASED""#, #""signedDate":\#(signedDateMs)"#,
            #""environment":"\#(environment)""#, #""transactionReason":"RENEWAL""#, #""storefront":"USA""#,
            #""storefrontId":"143441""#, #""price":4990"#, #""currency":"USD""#,
            #""appTransactionId":"704289572311234567""#,
        ]
        members += extra
        return "{" + members.joined(separator: ",") + "}"
    }

    public static func renewalInfo(
        originalTransactionId: String = "2000000811111111",
        environment: String = "Production",
        autoRenewStatus: Int = 1,
        signedDateMs: Int64 = signedDateMs,
        extra: [String] = []
    ) -> String {
        var members = [
            #""originalTransactionId":"\#(originalTransactionId)""#,
            #""autoRenewProductId":"com.example.reader.monthly""#, #""productId":"com.example.reader.monthly""#,
            #""autoRenewStatus":\#(autoRenewStatus)"#, #""isInBillingRetryPeriod":false"#,
            #""signedDate":\#(signedDateMs)"#, #""environment":"\#(environment)""#,
            #""renewalDate":1797592000000"#, #""renewalPrice":4990"#, #""currency":"USD""#,
            #""recentSubscriptionStartDate":1790000000000"#,
        ]
        members += extra
        return "{" + members.joined(separator: ",") + "}"
    }

    public static func notification(
        type: String = "DID_RENEW",
        signedTransaction: String?,
        signedRenewal: String?,
        bundleId: String = bundleId,
        environment: String = "Production",
        appAppleId: Int64 = 1_234_567_890
    ) -> String {
        var data = [
            #""environment":"\#(environment)""#, #""appAppleId":\#(appAppleId)"#, #""bundleId":"\#(bundleId)""#,
            #""bundleVersion":"42""#, #""status":1"#,
        ]
        if let signedTransaction { data.append(#""signedTransactionInfo":"\#(signedTransaction)""#) }
        if let signedRenewal { data.append(#""signedRenewalInfo":"\#(signedRenewal)""#) }
        return #"{"notificationType":"\#(type)","notificationUUID":"3ad1e2f0-7c1b-4d3e-9f8a-0b1c2d3e4f50","#
            + #""version":"2.0","signedDate":\#(signedDateMs),"data":{\#(data.joined(separator: ","))}}"#
    }
}
