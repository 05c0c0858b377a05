import Foundation
import TestSupport
import Testing

@testable import AppleReports

/// The Subscription Event and Subscription reports read without a database: recognised by header, typed, the
/// Subscription report's day from its name or the caller, and every bad file named by file, line and column.
@Suite struct SubscriptionReportParserTests {
    typealias S = SubscriptionReportFixtures

    func parse(_ text: String, file: String, date: String? = nil) throws(AppleReportError) -> AppleReportContents {
        try AppleReportParser.parse(data: Data(text.utf8), file: file, date: date)
    }

    func error(_ text: String, file: String, date: String? = nil) -> AppleReportError? {
        do {
            _ = try parse(text, file: file, date: date)
            return nil
        } catch {
            return error
        }
    }

    @Test func aSubscriptionEventReportIsRecognisedAndItsRowsTyped() throws {
        let text = S.report(
            S.eventColumns,
            [
                S.eventRow(),
                S.eventRow(
                    "Cancel",
                    quantity: "1",
                    ["Cancellation Reason": "Billing Issue", "Days Before Canceling": "12", "Event Date": "11/21/2026"]
                ),
            ]
        )
        let contents = try parse(text, file: "Subscription_Event_85012345_20261120.txt")
        #expect(contents.kind == .subscriptionEvent)
        guard case .subscriptionEvent(let rows) = contents.rows else {
            Issue.record("not event rows: \(contents.rows)")
            return
        }
        #expect(rows.map(\.event) == ["Renew", "Cancel"])
        #expect(rows.map(\.quantity) == [3, 1])
        #expect(rows[0].consecutivePaidPeriods == 4 && rows[0].originalStartDate == "2026-07-20")
        #expect(rows[1].cancellationReason == "Billing Issue" && rows[1].daysBeforeCanceling == 12)
        #expect(rows[0].daysBeforeCanceling == nil && !rows[0].marketingOptIn)
        #expect(contents.periodStart == "2026-11-20" && contents.periodEnd == "2026-11-21")
        #expect(contents.fiscalMonth == nil)
    }

    @Test func aSubscriptionReportTakesItsDayFromApplesFileNameOrTheCaller() throws {
        let text = S.report(
            S.subscriptionColumns,
            [S.subscriptionRow(), S.subscriptionRow(active: "0", subscribers: "2", ["Billing Retry": "2"])]
        )
        let named = try parse(text, file: "dir/Subscription_85012345_20261120.txt.gz")
        #expect(named.kind == .subscription)
        #expect(named.periodStart == "2026-11-20" && named.periodEnd == "2026-11-20")
        guard case .subscription(let rows) = named.rows else {
            Issue.record("not subscription rows: \(named.rows)")
            return
        }
        #expect(rows.map(\.counts.activeStandardPrice) == [12, 0])
        #expect(rows.map(\.counts.billingRetry) == [0, 2])
        #expect(rows.map(\.counts.subscribers) == [12, 2])
        #expect(rows[0].counts.freeTrialWinBack == nil)  // a column the header lacks
        #expect(rows[0].price.customerPriceMilliunits == 9990)
        let given = try parse(text, file: "renamed.txt", date: "2026-11-19")
        #expect(given.periodStart == "2026-11-19")
        #expect(given.sha256 == named.sha256)
    }

    @Test func aSubscriptionReportWithoutADayIsRefusedAskingForIt() {
        let text = S.report(S.subscriptionColumns, [S.subscriptionRow()])
        for name in ["renamed.txt", "Subscription_85012345_20261131.txt", "Subscription_85012345_2026112.txt"] {
            let error = error(text, file: name)
            #expect(error?.code == .missingDate, "\(name)")
            #expect(error?.description.contains("--date YYYY-MM-DD") == true)
        }
        #expect(error(text, file: "renamed.txt", date: "2026-13-01")?.code == .missingDate)
    }

    @Test func aBadRowNamesItsLineAndColumnAndNothingIsRead() {
        let events = S.report(S.eventColumns, [S.eventRow(), S.eventRow(quantity: "two")])
        let bad = error(events, file: "events.txt")
        #expect(bad?.code == .invalidValue && bad?.line == 3 && bad?.column == "Quantity")
        #expect(bad?.description.hasPrefix("events.txt: line 3: Quantity: ") == true)
        let counts = S.report(S.subscriptionColumns, [S.subscriptionRow(["Grace Period": "1.5"])])
        let badCount = error(counts, file: "Subscription_85012345_20261120.txt")
        #expect(badCount?.line == 2 && badCount?.column == "Grace Period")
        let noEvent = error(S.report(S.eventColumns, [S.eventRow("")]), file: "events.txt")
        #expect(noEvent?.code == .missingValue && noEvent?.column == "Event")
    }

    @Test func aWrongHeaderIsRefusedAndALackingOneListsTheColumns() {
        let sales = "Provider\tProvider Country\tSKU\tDeveloper\n"
        #expect(error(sales, file: "sales.txt")?.code == .unknownHeader)
        let columns = S.subscriptionColumns.filter { $0 != "Customer Price" }
        let lacking = error(S.report(columns, []), file: "Subscription_85012345_20261120.txt")
        #expect(lacking?.code == .missingColumns && lacking?.line == 1)
        #expect(lacking?.description.contains("Customer Price") == true)
    }

    @Test func aTruncatedGzipOfEitherReportIsRefused() async throws {
        try await withTemporaryDirectoryAsync { directory in
            for (name, text) in [
                ("Subscription_85012345_20261120.txt", S.report(S.subscriptionColumns, [S.subscriptionRow()])),
                ("Subscription_Event_85012345_20261120.txt", S.report(S.eventColumns, [S.eventRow()])),
            ] {
                let path = try await AppleReportFixtures.write(text, name, in: directory, gzip: true)
                #expect(try AppleReportParser.parse(path: path).rows.count == 1)
                let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
                do {
                    _ = try AppleReportParser.parse(data: bytes.prefix(bytes.count - 10), file: name + ".gz")
                    Issue.record("a truncated gzip was read")
                } catch let error as AppleReportError {
                    #expect(error.code == .corruptGzip)
                    #expect(error.description.hasPrefix(name + ".gz: "))
                }
            }
        }
    }
}
