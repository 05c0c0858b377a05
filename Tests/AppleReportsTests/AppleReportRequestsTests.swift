import AppStoreClient
import AppleReports
import Foundation
import Testing

/// What `apple-reports download` asks Apple for over a range of days, and how Apple's answers read
/// (docs/apple-reports.md, "Downloading").
@Suite struct AppleReportRequestsTests {
    @Test func everyDayOfTheRangeAndEveryFiscalMonthHoldingOneOfThem() {
        // 2026-09-26 is the last day of fiscal 2026 (its September); 2026-09-27 starts fiscal 2027 (October).
        let requests = AppleReportRequests.covering(
            from: PacificDay("2026-09-25")!,
            through: PacificDay("2026-09-28")!,
            reports: [.subscriber, .financial, .financeDetail],
            vendorNumber: "85012345"
        )
        #expect(
            requests.map(\.label) == [
                "subscriber 2026-09-25", "subscriber 2026-09-26", "subscriber 2026-09-27", "subscriber 2026-09-28",
                "financial 2026-12", "finance_detail 2026-12", "financial 2027-01", "finance_detail 2027-01",
            ]
        )
        let financialOnly = AppleReportRequests.covering(
            from: PacificDay("2026-10-04")!,
            through: PacificDay("2026-11-28")!,
            reports: [.financial],
            vendorNumber: "85012345"
        )
        // Fiscal October 2026 (27 Sep - 31 Oct, 5 weeks) and November (1 - 28 Nov).
        #expect(financialOnly.map(\.reportDate) == ["2027-01", "2027-02"])
        #expect(
            AppleReportRequests.covering(
                from: PacificDay("2026-10-02")!,
                through: PacificDay("2026-10-01")!,
                reports: [.subscriber],
                vendorNumber: "1"
            ).isEmpty
        )
    }

    @Test func theQueryIsWhatAppleDocumentsForEachReport() {
        let daily = AppStoreConnectReportRequest(
            report: .subscriber,
            reportDate: "2026-11-20",
            vendorNumber: "85012345"
        )
        #expect(daily.path == "/v1/salesReports")
        #expect(
            Dictionary(uniqueKeysWithValues: daily.query) == [
                "filter[frequency]": "DAILY", "filter[reportDate]": "2026-11-20", "filter[reportSubType]": "DETAILED",
                "filter[reportType]": "SUBSCRIBER", "filter[vendorNumber]": "85012345", "filter[version]": "1_3",
            ]
        )
        let detail = AppStoreConnectReportRequest(
            report: .financeDetail,
            reportDate: "2027-02",
            vendorNumber: "85012345"
        )
        #expect(detail.path == "/v1/financeReports")
        #expect(
            Dictionary(uniqueKeysWithValues: detail.query) == [
                "filter[regionCode]": "Z1", "filter[reportDate]": "2027-02", "filter[reportType]": "FINANCE_DETAIL",
                "filter[vendorNumber]": "85012345",
            ]
        )
    }

    static func errorBody(_ status: Int, _ code: String, _ detail: String) -> [UInt8] {
        Array(
            #"{"errors":[{"id":"x","status":"\#(status)","code":"\#(code)","title":"t","detail":"\#(detail)"}]}"#.utf8
        )
    }

    @Test func applesAnswersAreClassifiedByStatusCodeAndDetail() {
        func classify(_ status: Int?, _ body: [UInt8] = []) -> AppStoreConnectAnswer {
            AppStoreConnectAnswer.classify(
                status: status,
                body: body,
                retryAfter: nil,
                transportFailure: status == nil ? .timeout : nil
            )
        }
        #expect(classify(200, [31, 139]) == .file([31, 139]))
        #expect(
            classify(404, Self.errorBody(404, "NOT_FOUND", "There were no sales for the date specified.")) == .noSales
        )
        #expect(
            classify(404, Self.errorBody(404, "NOT_FOUND", "The report is not available yet."))
                == .notYetAvailable(detail: "The report is not available yet.")
        )
        #expect(classify(410, Self.errorBody(410, "GONE", "Too old.")) == .gone(detail: "Too old."))
        #expect(
            classify(429, Self.errorBody(429, "RATE_LIMIT_EXCEEDED", "x"))
                == .retryable(notBefore: nil, reason: "HTTP 429 RATE_LIMIT_EXCEEDED")
        )
        #expect(classify(503) == .retryable(notBefore: nil, reason: "HTTP 503"))
        #expect(classify(nil) == .retryable(notBefore: nil, reason: "timeout"))
        #expect(
            classify(401, Self.errorBody(401, "NOT_AUTHORIZED", "Provide a properly configured token."))
                == .refused(status: 401, code: "NOT_AUTHORIZED", detail: "Provide a properly configured token.")
        )
        #expect(classify(400, Array("<html>".utf8)) == .refused(status: 400, code: "HTTP_400", detail: ""))
        #expect(
            AppStoreConnectAnswer.classify(
                status: nil,
                body: [],
                retryAfter: nil,
                transportFailure: .tlsRefused("untrusted")
            )
                == .refused(status: 0, code: "TLS_REFUSED", detail: "untrusted")
        )
    }

    @Test func theHoursRemainingRequestsAreReadFromXRateLimit() {
        #expect(
            AppStoreConnectAnswer.remainingRequests(inRateLimitHeader: "user-hour-lim:3600;user-hour-rem:3599;") == 3599
        )
        #expect(AppStoreConnectAnswer.remainingRequests(inRateLimitHeader: "user-hour-rem:0") == 0)
        #expect(AppStoreConnectAnswer.remainingRequests(inRateLimitHeader: "user-hour-lim:3600;") == nil)
        #expect(AppStoreConnectAnswer.remainingRequests(inRateLimitHeader: nil) == nil)
    }
}
