import Foundation
import Testing

@testable import Reconciler

/// The price catalog file of `products import`: good rows load, and every bad input names the file, the line and
/// the column, and loads nothing (docs/operations.md, "The price catalog").
@Suite struct CatalogFileTests {
    static let header = "product_id,currency,price,period,intro_price,subscription_group_id,display_name\n"

    func problems(_ text: String) -> [CatalogFileError.Problem] {
        do {
            _ = try CatalogFile.parse(Array(text.utf8), file: "prices.csv")
            return []
        } catch {
            return error.problems
        }
    }

    func message(_ text: String) -> String {
        do {
            _ = try CatalogFile.parse(Array(text.utf8), file: "prices.csv")
            return ""
        } catch {
            return error.description
        }
    }

    @Test func goodFileLoadsEveryRowWithExactPrices() throws {
        let rows = try CatalogFile.parse(
            Array(
                (Self.header + "pro.monthly,USD,9.99,P1M,4.99,21000001,\"Pro, monthly\"\r\n"
                    + "pro.monthly,JPY,1500,P1M,,21000001,Pro\r\n\r\n" + "news.weekly,EUR,2.9,P1W,,,\n").utf8
            ),
            file: "prices.csv"
        )
        #expect(rows.count == 3)
        #expect(rows[0].price == Decimal(string: "9.99"))
        #expect(rows[0].introPrice == Decimal(string: "4.99"))
        #expect(rows[0].displayName == "Pro, monthly")
        #expect(rows[0].subscriptionGroupId == "21000001")
        #expect(rows[1].currency == "JPY" && rows[1].price == 1500 && rows[1].introPrice == nil)
        #expect(rows[2].period == "P1W" && rows[2].displayName == nil)
    }

    @Test func columnsInAnyOrderAndOptionalColumnsLeftOut() throws {
        let rows = try CatalogFile.parse(
            Array("period,price,currency,product_id\nP1Y,79.99,USD,pro.yearly\n".utf8),
            file: "p"
        )
        #expect(
            rows == [
                ProductPrice(productId: "pro.yearly", currency: "USD", price: Decimal(string: "79.99")!, period: "P1Y")
            ]
        )
    }

    @Test func anAppleIdIsReadPerProductAndMustBeDigitsTheSameOnEveryRowAndOneProductsOnly() throws {
        let header = "product_id,currency,price,period,apple_id\n"
        let rows = try CatalogFile.parse(
            Array(
                (header + "pro.monthly,USD,9.99,P1M,6400000001\npro.monthly,EUR,9.99,P1M,6400000001\n"
                    + "news.weekly,EUR,2.99,P1W,\n").utf8
            ),
            file: "prices.csv"
        )
        #expect(rows.map(\.appleId) == ["6400000001", "6400000001", nil])
        let twoIds = problems(header + "pro.monthly,USD,9.99,P1M,6400000001\npro.monthly,EUR,9.99,P1M,6400000002\n")
        #expect(twoIds.map(\.line) == [3])
        #expect(twoIds.first?.field == "apple_id")
        #expect(twoIds.first?.message.contains("has Apple ID 6400000001 on line 2") == true)
        let shared = problems(header + "pro.monthly,USD,9.99,P1M,6400000001\npro.yearly,USD,79.99,P1Y,6400000001\n")
        #expect(shared.first?.message.contains("is pro.monthly's on line 2") == true)
        let letters = problems(header + "pro.monthly,USD,9.99,P1M,pro-1\n")
        #expect(letters.first?.field == "apple_id")
        #expect(letters.first?.message.contains("is not an Apple ID") == true)
    }

    @Test func badValuesNameTheLineAndTheColumn() {
        let cases: [(String, Int, String, String)] = [
            ("pro.monthly,usd,9.99,P1M,,,\n", 2, "currency", "\"usd\" is not an ISO 4217 code"),
            ("pro.monthly,USD,9.999,P1M,,,\n", 2, "price", "more decimal places than USD's minor unit (2)"),
            ("pro.monthly,JPY,1500.5,P1M,,,\n", 2, "price", "more decimal places than JPY's minor unit (0)"),
            ("pro.monthly,USD,$9.99,P1M,,,\n", 2, "price", "is not a price like 9.99"),
            ("pro.monthly,USD,-1,P1M,,,\n", 2, "price", "is not a price like 9.99"),
            ("pro.monthly,USD,9.99,1 month,,,\n", 2, "period", "is not one of"),
            ("pro.monthly,USD,9.99,P1M,half,,\n", 2, "intro_price", "is not a price like 9.99"),
            (",USD,9.99,P1M,,,\n", 2, "product_id", "must not be empty"),
            ("pro monthly,USD,9.99,P1M,,,\n", 2, "product_id", "contains whitespace"),
            ("pro.monthly,USD,,P1M,,,\n", 2, "price", "must not be empty"),
        ]
        for (row, line, field, text) in cases {
            let found = problems(Self.header + row)
            #expect(found.count == 1, "\(row)")
            #expect(found.first?.line == line, "\(row)")
            #expect(found.first?.field == field, "\(row)")
            #expect(found.first?.message.contains(text) == true, "\(row): \(found)")
            #expect(message(Self.header + row).contains("prices.csv line \(line): \(field): "), "\(row)")
        }
    }

    @Test func currenciesAreRealISO4217CodesAndTheSimulatorsSixLoad() throws {
        for code in ["XTS", "ZZZ", "XAU", "XXX", "XDR"] {
            let found = problems(Self.header + "pro.monthly,\(code),9.99,P1M,,,\n")
            #expect(found.map(\.field) == ["currency"], "\(code): \(found)")
            #expect(found.first?.message.contains("ISO 4217") == true, "\(code): \(found)")
        }
        let six = ["BRL", "CAD", "EUR", "GBP", "JPY", "USD"]
        let rows = try CatalogFile.parse(
            Array((Self.header + six.map { "pro.monthly,\($0),1500,P1M,,,\n" }.joined()).utf8),
            file: "prices.csv"
        )
        #expect(rows.map(\.currency) == six)
    }

    @Test func productIdsFollowTheImportsRule() {
        let cases = [
            "pro\tmonthly", "\"pro\nmonthly\"", "pro\u{7}monthly", "pro\u{0}monthly",
            String(repeating: "p", count: 2000),
        ]
        for productId in cases {
            let found = problems(Self.header + "\(productId),USD,9.99,P1M,,,\n")
            #expect(found.map(\.field) == ["product_id"], "\(productId.debugDescription): \(found)")
        }
    }

    @Test func everyBadLineIsListedAndNothingLoads() {
        let found = problems(
            Self.header + "a,USD,1.00,P1M,,,\n" + "b,USD,x,P1M,,,\n" + "a,USD,2.00,P1M,,,\n" + "c,USD,1.00,P1M,,\n"
                + "d,\"USD,1.00,P1M,,,\n"
        )
        #expect(found.map(\.line) == [3, 4, 5, 6])
        #expect(found[1].field == "currency" && found[1].message.contains("already appeared on line 2"))
        #expect(found[2].message.contains("expected 7 columns like the header, got 6"))
    }

    @Test func headerProblemsAreNamed() {
        #expect(problems("product_id,currency,price\nx,USD,1.00\n").contains { $0.line == 1 && $0.field == "period" })
        #expect(problems("product_id,currency,price,period,cost\n").contains { $0.field == "cost" })
        #expect(problems("product_id,currency,price,period,price\n").contains { $0.message == "column given twice" })
        #expect(problems("").first?.message.contains("empty file") == true)
        #expect(problems(Self.header).first?.message == "no price rows after the header")
        #expect(message("").hasPrefix("prices.csv empty file"))
    }

    @Test func unreadableFileIsNamed() {
        #expect(throws: CatalogFileError.self) { try CatalogFile.load(path: "/nonexistent/prices.csv") }
        do {
            _ = try CatalogFile.load(path: "/nonexistent/prices.csv")
        } catch {
            #expect(error.description.contains("/nonexistent/prices.csv cannot read the file"))
            #expect(error.exitCode == .usage)
        }
    }
}
