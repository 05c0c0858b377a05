import AppStoreClient

/// Which reports `apple-reports download` asks for over a range of Pacific days (docs/apple-reports.md,
/// "Downloading"): the Subscriber, Subscription Event and Subscription reports of every day, and the Financial
/// reports of every fiscal month that holds one of the days, oldest first.
public enum AppleReportRequests {
    public static func covering(
        from first: PacificDay,
        through last: PacificDay,
        reports: Set<AppStoreConnectReportRequest.Report>,
        vendorNumber: String
    ) -> [AppStoreConnectReportRequest] {
        guard first <= last else { return [] }
        var requests: [AppStoreConnectReportRequest] = []
        let daily = [AppStoreConnectReportRequest.Report.subscriber, .subscriptionEvent, .subscription].filter(
            reports.contains
        )
        var day = first
        while !daily.isEmpty, day <= last {
            for report in daily {
                requests.append(.init(report: report, reportDate: day.description, vendorNumber: vendorNumber))
            }
            day = day.next
        }
        let financial = [AppStoreConnectReportRequest.Report.financial, .financeDetail].filter(reports.contains)
        var month = AppleFiscalMonth(containing: first)
        while !financial.isEmpty, month.start <= last {
            for report in financial {
                requests.append(.init(report: report, reportDate: month.reportDate, vendorNumber: vendorNumber))
            }
            month = month.next
        }
        return requests
    }
}
