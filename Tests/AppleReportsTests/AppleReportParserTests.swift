import Foundation
import TestSupport
import Testing

@testable import AppleReports

/// Reading App Store Connect report files without a database: kinds from the header, typed values, and every bad
/// file or row named by file, line and column.
@Suite struct AppleReportParserTests {
    typealias F = AppleReportFixtures

    func parse(_ text: String, file: String = "report.txt") throws(AppleReportError) -> AppleReportContents {
        try AppleReportParser.parse(data: Data(text.utf8), file: file)
    }

    func error(_ text: String, file: String = "report.txt") -> AppleReportError? {
        do {
            _ = try parse(text, file: file)
            return nil
        } catch {
            return error
        }
    }

    @Test func aSubscriberReportIsRecognisedAndItsRowsTyped() throws {
        let text = F.subscriberReport([
            F.subscriberRow(),
            F.subscriberRow(price: "-9.99", proceeds: "-6.99", refund: true, units: "-1", ["Event Date": "11/21/2026"]),
        ])
        let contents = try parse(text)
        #expect(contents.kind == .subscriber)
        #expect(!contents.compressed)
        guard case .subscriber(let rows) = contents.rows else {
            Issue.record("not subscriber rows: \(contents.rows)")
            return
        }
        #expect(rows.map(\.line) == [2, 3])
        #expect(rows.map(\.price.customerPriceMilliunits) == [9990, -9990])
        #expect(rows.map(\.price.developerProceedsMilliunits) == [6990, -6990])
        #expect(rows.map(\.refund) == [false, true])
        #expect(rows.map(\.units) == [1, -1])
        #expect(rows[1].eventDate == "2026-11-21")
        #expect(rows[1].purchaseDate == "2026-10-20")
        #expect(rows[0].subscriptionOfferName == nil)
        #expect(contents.periodStart == "2026-11-20" && contents.periodEnd == "2026-11-21")
        #expect(contents.fiscalMonth == nil)
        #expect(contents.sha256.count == 64)
    }

    @Test func amountsAreExactThousandthsAndAnythingElseIsRefused() {
        let good: [(String, Int64)] = [
            ("4.99", 4990), ("-0.7", -700), ("12", 12000), ("0.7000", 700), ("1234567.891", 1_234_567_891),
        ]
        for (text, value) in good { #expect(AppleReportValue.milliunits(text) == value, "\(text)") }
        for text in ["4,99", "1.2345", "", "-", ".5", "5.", "1e3", "+1", " 1", "9999999999999999"] {
            #expect(AppleReportValue.milliunits(text) == nil, "\(text)")
        }
    }

    @Test func datesReadInBothOfApplesFormatsAndImpossibleDaysAreRefused() {
        #expect(AppleReportValue.isoDate("11/20/2026") == "2026-11-20")
        #expect(AppleReportValue.isoDate("2028-02-29") == "2028-02-29")
        for text in ["2026-02-29", "2026-13-01", "20/11/2026", "2026/11/20", "2026-11-2", "Nov 20, 2026"] {
            #expect(AppleReportValue.isoDate(text) == nil, "\(text)")
        }
    }

    @Test func aHeaderOfNoKnownReportIsRefusedNamingTheFile() {
        let sales = "Provider\tProvider Country\tSKU\tDeveloper\tTitle\tUnits\n" + "APPLE\tUS\tsku\tdev\tt\t1\n"
        let refused = error(sales, file: "S_D_85012345_20261120.txt")
        #expect(refused?.code == .unknownHeader)
        #expect(refused?.line == 1)
        #expect(
            refused?.description.hasPrefix("S_D_85012345_20261120.txt: line 1: ") == true,
            "\(String(describing: refused))"
        )
        #expect(error("", file: "empty.txt")?.code == .unknownHeader)
    }

    @Test func aBadValueNamesItsLineAndColumn() {
        let text = F.subscriberReport([
            F.subscriberRow(), F.subscriberRow(), F.subscriberRow(currency: "US$"), F.subscriberRow(price: "4,99"),
        ])
        let refused = error(text, file: "sub.txt")
        #expect(refused?.code == .invalidValue)
        #expect(refused?.line == 4)
        #expect(refused?.column == "Customer Currency")
        #expect(refused?.description == "sub.txt: line 4: Customer Currency: \"US$\" is not an ISO 4217 code like USD")
        let empty = error(F.subscriberReport([F.subscriberRow(["Subscription Apple ID": ""])]))
        #expect(empty?.code == .missingValue && empty?.column == "Subscription Apple ID" && empty?.line == 2)
    }

    @Test func aRowWithTheWrongNumberOfFieldsIsNamed() {
        let text = F.subscriberReport([F.subscriberRow(), F.subscriberRow() + "\textra"])
        let refused = error(text)
        #expect(refused?.code == .wrongFieldCount)
        #expect(refused?.line == 3)
    }

    @Test func aHeaderLackingARequiredColumnListsIt() {
        let header = F.subscriberColumns.filter { $0 != "Units" && $0 != "Country" }
        let refused = error(header.joined(separator: "\t") + "\n")
        #expect(refused?.code == .missingColumns)
        #expect(refused?.problem.contains("Country, Units") == true, "\(String(describing: refused))")
    }

    @Test func aConsolidatedFinancialReportReadsItsRowsAndChecksApplesRowCount() throws {
        let rows = [
            F.financialRow(quantity: "10", share: "6.99", extended: "69.90"),
            F.financialRow(quantity: "-1", share: "6.99", extended: "-6.99", saleOrReturn: "R"),
            F.financialRow(
                quantity: "3",
                share: "7.5",
                extended: "22.5",
                price: "10.99",
                currency: "EUR",
                country: "FR"
            ),
        ]
        let contents = try parse(F.financialReport(rows))
        #expect(contents.kind == .financial)
        guard case .financial(let stored) = contents.rows else {
            Issue.record("not financial rows")
            return
        }
        #expect(stored.map(\.amounts.extendedPartnerShareMilliunits) == [69900, -6990, 22500])
        #expect(stored.map(\.amounts.saleOrReturn) == [.sale, .refund, .sale])
        #expect(stored.map(\.amounts.countryOfSale) == ["US", "US", "FR"])
        #expect(contents.periodStart == "2026-09-27" && contents.periodEnd == "2026-10-31")
        #expect(contents.fiscalMonth == "2026-10")

        let miscounted = error(F.financialReport(rows, statedRows: 4))
        #expect(miscounted?.code == .totalMismatch)
        #expect(miscounted?.column == "Total_Rows")
        let badSign = error(
            F.financialReport([F.financialRow(quantity: "1", share: "1", extended: "1", saleOrReturn: "X")])
        )
        #expect(badSign?.column == "Sale or Return" && badSign?.line == 2)
    }

    @Test func aDetailedFinancialReportTakesItsPeriodFromThePreambleAndSkipsTheCountrySummary() throws {
        let header = [
            "Transaction Date", "Settlement Date", "Apple Identifier", "SKU", "Title", "Developer Name",
            "Product Type Identifier", "Country of Sale", "Quantity", "Partner Share", "Extended Partner Share",
            "Partner Share Currency", "Customer Price", "Customer Currency", "Sale or Return", "Promo Code",
            "Order Type", "Region",
        ]
        let row = [
            "10/02/2026", "10/30/2026", "6400000001", "com.example.renewals.pro", "Pro Monthly", "Example",
            "IAY", "JP", "2", "700", "1400", "JPY", "1000", "JPY", "S", "", "", "Japan",
        ]
        let text = [
            "Vendor Name\tExample Inc", "Start Date\t09/27/2026", "End Date\t10/31/2026",
            header.joined(separator: "\t"), row.joined(separator: "\t"), "",
            "Country Of Sale\tPartner Share Currency\tQuantity\tExtended Partner Share", "JP\tJPY\t2\t1400",
        ].joined(separator: "\n")
        let contents = try parse(text)
        #expect(contents.kind == .financeDetail)
        #expect(contents.rows.count == 1)
        guard case .financeDetail(let rows) = contents.rows else { return }
        #expect(rows[0].line == 5)
        #expect(rows[0].amounts.extendedPartnerShareMilliunits == 1_400_000)
        #expect(rows[0].settlementDate == "2026-10-30")
        #expect(contents.periodStart == "2026-09-27" && contents.periodEnd == "2026-10-31")
        #expect(contents.fiscalMonth == "2026-10")
    }

    @Test func gzipAndPlainAreTheSameFileAndATruncatedGzipIsRefused() async throws {
        try await withTemporaryDirectoryAsync { directory in
            let text = F.subscriberReport([F.subscriberRow(), F.subscriberRow(price: "4.99", proceeds: "3.49")])
            let plain = try await F.write(text, "plain.txt", in: directory)
            let gzip = try await F.write(text, "packed.txt", in: directory, gzip: true)
            let fromPlain = try AppleReportParser.parse(path: plain)
            let fromGzip = try AppleReportParser.parse(path: gzip)
            #expect(fromGzip.compressed && !fromPlain.compressed)
            #expect(fromGzip.sha256 == fromPlain.sha256)
            #expect(fromGzip.rows.count == 2)

            let bytes = try Data(contentsOf: URL(fileURLWithPath: gzip))
            do {
                _ = try AppleReportParser.parse(data: bytes.prefix(bytes.count - 10), file: "cut.txt.gz")
                Issue.record("a truncated gzip was read")
            } catch let error as AppleReportError {
                #expect(error.code == .corruptGzip)
                #expect(error.description.hasPrefix("cut.txt.gz: "))
            }
        }
    }

}
