import Foundation
import ReceiptDomain

/// A price catalog file for `renewal-reconciler products import` (docs/reports.md, "Money from the catalog"):
/// CSV (RFC 4180, UTF-8), a header row naming the columns in any order, then one row per product and currency.
///
/// ```csv
/// product_id,currency,price,period,intro_price,subscription_group_id,display_name
/// com.example.pro.monthly,USD,9.99,P1M,4.99,21000001,Pro (monthly)
/// com.example.pro.monthly,JPY,1500,P1M,750,21000001,Pro (monthly)
/// ```
///
/// `product_id` (`ProductIdRule`, the same rule as `import`'s), `currency` (ISO 4217: `ISO4217Currency`), `price` (the customer price per period) and `period` (`P1W`, `P1M`, `P2M`,
/// `P3M`, `P6M`, `P1Y`) are required; `intro_price` (the pay-as-you-go introductory price per period),
/// `subscription_group_id`, `display_name` and `apple_id` (the product's Apple ID in App Store Connect, digits: the
/// Subscriber report's `Subscription Apple ID`, the same on every currency row of a product; docs/tie-out.md) are
/// optional (an empty cell is none). Prices are plain decimals
/// with a dot and at most the currency's minor-unit places (`9.99`, JPY `1500`), as App Store Connect lists them.
/// One row per product and currency. Every problem is named by line and column, and one problem loads nothing.
public enum CatalogFile {
    public static let requiredColumns = ["product_id", "currency", "price", "period"]
    public static let optionalColumns = ["intro_price", "subscription_group_id", "display_name", "apple_id"]
    /// The periods the `products` table accepts.
    public static let periods: Set<String> = ["P1W", "P1M", "P2M", "P3M", "P6M", "P1Y"]

    /// Reads and checks `path`.
    /// - Throws: `CatalogFileError` naming the file, and each bad line and column.
    public static func load(path: String) throws(CatalogFileError) -> [ProductPrice] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CatalogFileError(
                file: path,
                problems: [.init(line: 0, field: nil, message: "cannot read the file")]
            )
        }
        return try parse(Array(data), file: path)
    }

    /// Checks the file's bytes (`file` names it in messages) and returns its rows in file order.
    public static func parse(_ bytes: [UInt8], file: String) throws(CatalogFileError) -> [ProductPrice] {
        var input = bytes
        if input.starts(with: [0xEF, 0xBB, 0xBF]) { input.removeFirst(3) }
        guard String(validating: input, as: UTF8.self) != nil else {
            throw CatalogFileError(file: file, problems: [.init(line: 0, field: nil, message: "not UTF-8 text")])
        }
        var rows = Rows()
        var scanner = CSVRecordScanner(maxRecordBytes: 64 << 10, maxFields: 100)
        func handle(_ event: CSVRecordScanner.Event) {
            switch event {
            case .blank:
                return
            case .error(let line, _, _, let message):
                rows.problems.append(.init(line: line, field: nil, message: message))
            case .record(let line):
                let cells = (0..<scanner.fieldCount).map {
                    String(decoding: scanner.field($0), as: UTF8.self).trimmingCharacters(in: .whitespaces)
                }
                rows.add(cells, line: line)
            }
        }
        input.withUnsafeBufferPointer { buffer in
            var offset = 0
            while true {
                let (consumed, event) = scanner.consume(UnsafeBufferPointer(rebasing: buffer[offset...]))
                offset += consumed
                if let event {
                    handle(event)
                    scanner.prepareForNext()
                    continue
                }
                while let event = scanner.finish() {
                    handle(event)
                    scanner.prepareForNext()
                }
                break
            }
        }
        return try rows.checked(file: file)
    }

    /// The file's records read so far: its header, its price rows and what is wrong with them.
    private struct Rows {
        var header: [String]?
        var prices: [ProductPrice] = []
        var problems: [CatalogFileError.Problem] = []
        /// The line of each product and currency's row, to name the first when one repeats.
        var firstLine: [String: Int] = [:]
        /// Each product's Apple ID and the line that gave it first: one product has one Apple ID, one Apple ID one
        /// product.
        var appleIds: [String: (appleId: String, line: Int)] = [:]
        var productOfAppleId: [String: (productId: String, line: Int)] = [:]

        /// Takes a record's trimmed cells: the header first, then a price row per record.
        mutating func add(_ cells: [String], line: Int) {
            guard let columns = header else {
                header = cells.map { $0.lowercased() }
                problems += headerProblems(cells.map { $0.lowercased() }, line: line)
                return
            }
            guard cells.count == columns.count else {
                problems.append(
                    .init(
                        line: line,
                        field: nil,
                        message: "expected \(columns.count) columns like the header, got \(cells.count)"
                    )
                )
                return
            }
            var values: [String: String] = [:]
            for (name, cell) in zip(columns, cells) where !cell.isEmpty { values[name] = cell }
            switch row(values, line: line) {
            case .failure(let problem):
                problems.append(problem)
            case .success(let price):
                let key = price.productId + "\u{0}" + price.currency
                if let first = firstLine[key] {
                    problems.append(
                        .init(
                            line: line,
                            field: "currency",
                            message:
                                "\(price.productId) in \(price.currency) already appeared on line \(first) (one row per product and currency)"
                        )
                    )
                } else if let problem = appleIdProblem(price, line: line) {
                    problems.append(problem)
                } else {
                    firstLine[key] = line
                    prices.append(price)
                }
            }
        }

        /// A row whose Apple ID differs from another row's of the same product, or names another product too; records
        /// it otherwise.
        mutating func appleIdProblem(_ price: ProductPrice, line: Int) -> CatalogFileError.Problem? {
            guard let appleId = price.appleId else { return nil }
            if let known = appleIds[price.productId], known.appleId != appleId {
                return .init(
                    line: line,
                    field: "apple_id",
                    message: "\(price.productId) has Apple ID \(known.appleId) on line \(known.line), here \(appleId)"
                )
            }
            if let other = productOfAppleId[appleId], other.productId != price.productId {
                return .init(
                    line: line,
                    field: "apple_id",
                    message:
                        "Apple ID \(appleId) is \(other.productId)'s on line \(other.line) (one product per Apple ID)"
                )
            }
            appleIds[price.productId] = appleIds[price.productId] ?? (appleId, line)
            productOfAppleId[appleId] = productOfAppleId[appleId] ?? (price.productId, line)
            return nil
        }

        /// The prices, once the whole file is read; throws every problem, an empty file or a header alone.
        func checked(file: String) throws(CatalogFileError) -> [ProductPrice] {
            var problems = problems
            if header == nil {
                problems.append(.init(line: 0, field: nil, message: "empty file: no header row (\(headerText))"))
            } else if prices.isEmpty && problems.isEmpty {
                problems.append(.init(line: 0, field: nil, message: "no price rows after the header"))
            }
            guard problems.isEmpty else { throw CatalogFileError(file: file, problems: problems) }
            return prices
        }
    }

    static var headerText: String {
        (requiredColumns + optionalColumns.map { "[\($0)]" }).joined(separator: ",")
    }

    static func headerProblems(_ names: [String], line: Int) -> [CatalogFileError.Problem] {
        var problems: [CatalogFileError.Problem] = []
        let known = Set(requiredColumns + optionalColumns)
        var seen: Set<String> = []
        for name in names {
            if !known.contains(name) {
                problems.append(
                    .init(line: line, field: name, message: "unknown column (the columns are \(headerText))")
                )
            } else if !seen.insert(name).inserted {
                problems.append(.init(line: line, field: name, message: "column given twice"))
            }
        }
        for name in requiredColumns where !seen.contains(name) {
            problems.append(
                .init(line: line, field: name, message: "required column missing from the header (\(headerText))")
            )
        }
        return problems
    }

    /// One row's values (non-empty cells by column) checked into a `ProductPrice`.
    static func row(_ values: [String: String], line: Int) -> Result<ProductPrice, CatalogFileError.Problem> {
        func fail(_ field: String, _ message: String) -> Result<ProductPrice, CatalogFileError.Problem> {
            .failure(.init(line: line, field: field, message: message))
        }
        for name in requiredColumns where values[name] == nil { return fail(name, "must not be empty") }
        let productId = values["product_id"] ?? ""
        let currency = values["currency"] ?? ""
        let period = values["period"] ?? ""
        if let problem = ProductIdRule.problem(productId) { return fail("product_id", problem) }
        if let problem = ISO4217Currency.problem(currency) { return fail("currency", problem) }
        guard periods.contains(period) else {
            return fail(
                "period",
                "\(period.debugDescription) is not one of \(periods.sorted().joined(separator: ", "))"
            )
        }
        let price: Decimal
        switch amount(values["price"] ?? "", currency: currency) {
        case .failure(let problem): return fail("price", problem.message)
        case .success(let value): price = value
        }
        let appleId = values["apple_id"]
        if let appleId, appleId.count > 20 || !appleId.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            return fail("apple_id", "\(appleId.debugDescription) is not an Apple ID (digits, like 6400000001)")
        }
        var intro: Decimal?
        if let text = values["intro_price"] {
            switch amount(text, currency: currency) {
            case .failure(let problem): return fail("intro_price", problem.message)
            case .success(let value): intro = value
            }
        }
        return .success(
            ProductPrice(
                productId: productId,
                currency: currency,
                price: price,
                period: period,
                displayName: values["display_name"],
                introPrice: intro,
                subscriptionGroupId: values["subscription_group_id"],
                appleId: appleId
            )
        )
    }

    struct AmountProblem: Error {
        var message: String
    }

    /// A price cell: a plain decimal with a dot, at most 8 whole digits and the currency's minor-unit places
    /// (`CurrencyFormat.minorUnitDigits`): `9.99`, JPY `1500`.
    static func amount(_ text: String, currency: String) -> Result<Decimal, AmountProblem> {
        let digits = CurrencyFormat.minorUnitDigits(currency)
        guard text.range(of: #"^[0-9]{1,8}(\.[0-9]+)?$"#, options: .regularExpression) != nil,
            let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
        else {
            return .failure(
                AmountProblem(
                    message: "\(text.debugDescription) is not a price like 9.99 (digits, a dot, no sign or symbol)"
                )
            )
        }
        let places = text.split(separator: ".").dropFirst().first?.count ?? 0
        guard places <= digits else {
            return .failure(
                AmountProblem(
                    message:
                        "\(text.debugDescription) has more decimal places than \(currency)'s minor unit (\(digits))"
                )
            )
        }
        return .success(value)
    }
}
