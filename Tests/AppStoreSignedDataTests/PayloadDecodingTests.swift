import AppStoreSignedData
import Foundation
import SignedDataTestSupport
import Testing

/// Decoded payloads: every documented field, numbers of any JSON width, unknown fields ignored.
@Suite struct PayloadDecodingTests {
    static let pki = try! TestPKI()
    let verifier = SignedDataVerifier(roots: TrustedRoots([pki.root]))

    @Test func everyTransactionFieldDecodes() throws {
        let payload = """
            {"transactionId":"2000000811111203","originalTransactionId":"2000000811111111",
            "webOrderLineItemId":"2000000099999999","bundleId":"com.example.reader",
            "productId":"com.example.reader.yearly",
            "subscriptionGroupIdentifier":"21000001","purchaseDate":1795000000000,"originalPurchaseDate":1.79e12,
            "expiresDate":"1797592000000","quantity":1,"type":"Auto-Renewable Subscription",
            "appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138","inAppOwnershipType":"FAMILY_SHARED",
            "signedDate":1795230000000,"revocationReason":1,"revocationDate":1796000000000,"isUpgraded":true,
            "offerType":2,"offerIdentifier":"winback-1","environment":"Sandbox","storefront":"FRA",
            "storefrontId":"143442",
            "transactionReason":"PURCHASE","price":59990,"currency":"EUR","offerDiscountType":"PAY_UP_FRONT",
            "appTransactionId":"704289572311234567","offerPeriod":"P1Y","revocationType":"REFUND_PRORATED",
            "revocationPercentage":42500,"billingPlanType":"MONTHLY","someFieldFrom2030":{"nested":[1,2,3]}}
            """
        let t = try verifier.verifyTransaction(Self.pki.jws(payload: payload))
        #expect(t.originalPurchaseDate == Date(timeIntervalSince1970: 1_790_000_000))
        #expect(t.expiresDate == Date(timeIntervalSince1970: 1_797_592_000))
        #expect(t.inAppOwnershipType == "FAMILY_SHARED")
        #expect(t.revocationReason == 1 && t.revocationType == "REFUND_PRORATED" && t.revocationPercentage == 42500)
        #expect(t.isUpgraded == true && t.offerType == 2 && t.offerPeriod == "P1Y")
        #expect(t.price == 59990 && t.currency == "EUR" && t.storefrontId == "143442")
        #expect(t.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(t.billingPlanType == "MONTHLY" && t.appTransactionId == "704289572311234567")
    }

    @Test func renewalInfoFieldsDecode() throws {
        let payload = TestPayloads.renewalInfo(extra: [
            #""expirationIntent":2"#, #""gracePeriodExpiresDate":1798000000000"#, #""priceIncreaseStatus":0"#,
            #""offerType":1"#, #""offerIdentifier":"intro""#, #""offerDiscountType":"FREE_TRIAL""#,
            #""eligibleWinBackOfferIds":["a","b"]"#,
            // API 1.21: renewal info names the next renewal's plan `renewalBillingPlanType`; a `billingPlanType`
            // here is not Apple's and is ignored.
            #""renewalBillingPlanType":"MONTHLY_COMMITMENT_12""#, #""billingPlanType":"NOT_THIS_ONE""#,
        ])
        let r = try verifier.verifyRenewalInfo(Self.pki.jws(payload: payload))
        #expect(r.renewalBillingPlanType == "MONTHLY_COMMITMENT_12")
        #expect(r.expirationIntent == 2 && r.priceIncreaseStatus == 0 && r.offerDiscountType == "FREE_TRIAL")
        #expect(r.gracePeriodExpiresDate == Date(timeIntervalSince1970: 1_798_000_000))
        #expect(r.eligibleWinBackOfferIds == ["a", "b"])
        #expect(r.renewalDate == Date(timeIntervalSince1970: 1_797_592_000))
    }

    @Test func responseBodiesDecode() throws {
        let status = """
            {"environment":"Production","bundleId":"com.example.reader","appAppleId":1234567890,
             "data":[{"subscriptionGroupIdentifier":"21000001","lastTransactions":[
               {"status":1,"originalTransactionId":"2000000811111111","signedTransactionInfo":"a.b.c",
                "signedRenewalInfo":"d.e.f"}]}]}
            """
        let decoded = try StatusResponse.decode(Array(status.utf8))
        #expect(decoded.appAppleId == 1_234_567_890)
        #expect(decoded.data.first?.lastTransactions.first?.status == 1)
        #expect(throws: SignedDataError.self) { try StatusResponse.decode(Array(#"{"bundleId":"x"}"#.utf8)) }

        let history =
            #"{"revision":"r2","hasMore":true,"bundleId":"b","environment":"Sandbox","signedTransactions":["x.y.z"]}"#
        let page = try HistoryResponse.decode(Array(history.utf8))
        #expect(page.hasMore == true && page.signedTransactions == ["x.y.z"])

        let notifications = """
            {"paginationToken":"t","hasMore":false,"notificationHistory":[{"signedPayload":"p.q.r",
             "sendAttempts":[{"attemptDate":1698148900000,"sendAttemptResult":"NO_RESPONSE"}]}]}
            """
        let list = try NotificationHistoryResponse.decode(Array(notifications.utf8))
        #expect(list.notificationHistory.first?.sendAttempts.first?.sendAttemptResult == "NO_RESPONSE")
        #expect(
            list.notificationHistory.first?.sendAttempts.first?.attemptDate
                == Date(timeIntervalSince1970: 1_698_148_900)
        )
    }

    @Test func aSummaryNotificationDecodes() throws {
        let payload = """
            {"notificationType":"RENEWAL_EXTENSION","subtype":"SUMMARY","notificationUUID":"u","version":"2.0",
             "signedDate":1795230000000,"summary":{"environment":"Production","appAppleId":41234,
             "bundleId":"com.example.reader","productId":"p","requestIdentifier":"r",
             "storefrontCountryCodes":["USA","FRA"],"succeededCount":5,"failedCount":2}}
            """
        let n = try verifier.verifyNotification(Self.pki.jws(payload: payload))
        #expect(n.summary?.storefrontCountryCodes == ["USA", "FRA"])
        #expect(n.summary?.succeededCount == 5)
    }
}
