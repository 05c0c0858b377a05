import Foundation
import Testing

@testable import ReceiptDomain

/// HTTP-level classification and Retry-After parsing (the status table itself is covered by fixtures).
@Suite struct VerifyClassifierTests {
    let now = Date(timeIntervalSince1970: 1_717_200_000)

    func classify(
        http: Int,
        body: String = "",
        retryAfter: String? = nil,
        transport: TransportFailure? = nil
    )
        -> VerifyVerdict
    {
        VerifyClassifier.classify(
            transportFailure: transport,
            httpStatus: http,
            header: { $0.lowercased() == "retry-after" ? retryAfter : nil },
            body: Array(body.utf8),
            requestedEnvironment: .production,
            now: now
        )
    }

    @Test func httpStatusTable() {
        #expect(classify(http: 200, body: #"{"status": 0}"#).name == "ok")
        #expect(classify(http: 201, body: #"{"status": 21005}"#).name == "retry")
        #expect(classify(http: 301).name == "config_error")
        #expect(classify(http: 400).name == "config_error")
        #expect(classify(http: 401).name == "config_error")
        #expect(classify(http: 403).name == "config_error")
        #expect(classify(http: 408).name == "retry")
        #expect(classify(http: 413).name == "reject")
        #expect(classify(http: 429).name == "retry")
        #expect(classify(http: 500).name == "retry")
        #expect(classify(http: 502).name == "retry")
        #expect(classify(http: 504).name == "retry")
        #expect(classify(http: 103).name == "retry")
        #expect(classify(http: 200, body: "").reason?.code == .malformedResponse)
    }

    @Test func transportFailures() {
        for failure in [TransportFailure.timeout, .connectionFailed, .connectionReset, .tls, .other("dns")] {
            let verdict = classify(http: 0, transport: failure)
            #expect(verdict.isRetry, "\(failure)")
            #expect(verdict.reason?.description.contains(failure.description) == true)
        }
        #expect(classify(http: 200, body: #"{"status": 0}"#, transport: .responseTooLarge).name == "reject")
    }

    @Test func retryAfterDeltaSeconds() {
        #expect(
            classify(http: 503, retryAfter: "30")
                == .retry(VerdictReason(.httpServerError, httpStatus: 503), earliest: now + 30)
        )
        #expect(RetryAfter.earliest("0", now: now) == now)
        #expect(RetryAfter.earliest("999999999999999999999", now: now) == now + 86_400)
        #expect(RetryAfter.earliest("-5", now: now) == nil)
        #expect(RetryAfter.earliest("soon", now: now) == nil)
        #expect(RetryAfter.earliest("", now: now) == nil)
    }

    @Test func headerDictionaryIsCaseInsensitive() {
        let verdict = VerifyClassifier.classify(
            transportFailure: nil,
            httpStatus: 429,
            headers: ["retry-AFTER": "15"],
            body: [UInt8](),
            requestedEnvironment: .production,
            now: now
        )
        #expect(verdict == .retry(VerdictReason(.httpRateLimited, httpStatus: 429), earliest: now + 15))
    }

    @Test func retryAfterHTTPDates() {
        let expected = Date(timeIntervalSince1970: 784_111_777)  // 1994-11-06T08:49:37Z
        #expect(RetryAfter.parseHTTPDate("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(RetryAfter.parseHTTPDate("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(RetryAfter.parseHTTPDate("Sun Nov  6 08:49:37 1994") == expected)
        #expect(RetryAfter.parseHTTPDate("Sun, 06 Foo 1994 08:49:37 GMT") == nil)
        #expect(RetryAfter.parseHTTPDate("Sun, 32 Nov 1994 08:49:37 GMT") == nil)
        // A date in the past means "now", not a time travelling retry.
        #expect(RetryAfter.earliest("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == now)
        let future = RetryAfter.earliest("Sat, 01 Jun 2024 01:00:00 GMT", now: now)
        #expect(future == now + 3600)
    }

    @Test func reasonDescriptionsAreShortAndSafe() {
        for code in VerdictReason.Code.allCases {
            let reason = VerdictReason(code, appleStatus: 21199, httpStatus: 500, detail: "x")
            #expect(!reason.description.isEmpty)
            #expect(reason.description.count < 200)
        }
        #expect(VerdictReason(.unknownStatus, appleStatus: 30000).description.hasPrefix("unknown status 30000"))
    }

    @Test func malformedBodyReasonNeverCarriesTheReceipt() {
        let receipt = String(repeating: "MIIUVQYJKoZIhvcNAQcCoIIURjCC", count: 100)
        let verdict = classify(http: 200, body: #"{"status": 0, "latest_receipt_info": "\#(receipt)"}"#)
        #expect(verdict.isRetry)
        let text = verdict.reason?.description ?? ""
        #expect(text.contains("latest_receipt_info"))
        #expect(!text.contains(String(receipt.prefix(40))))
    }
}
