import CivilTime
import Foundation
import Postgres
import Reconciler

/// Compares a verifyReceipt run's catalog money (docs/reports.md, "Money from the catalog") with the simulator's
/// money truth for the run's period (`server-api/ledger.jsonl`, each transaction's price, offer and refund, and
/// `server-api/revenue.json`'s `period`), per currency, to the minor unit.
///
/// Of the production transactions the reconciler's ledger holds, what the catalog can know is compared exactly:
/// the gross of paid purchases dated in the period (list and introductory prices), and the refunds dated in it
/// that were full refunds of a purchase made at today's catalog price. What verifyReceipt cannot show is kept
/// apart with its reason and both amounts: prorated refunds (verifyReceipt has no refunded share; the catalog
/// values them in full) and refunds of purchases made before a price change (the catalog has today's prices).
/// Transactions the run never read (receipts Apple refused, rows not due) are listed apart too, and the sum of
/// everything must still equal revenue.json's period. Only meaningful for one run that left nothing unresolved.
public struct CatalogComparison {
    /// One currency's figures, in milliunits.
    public struct Figures: Sendable, Equatable {
        public var purchases = 0
        public var gross: Int64 = 0
        public var refunds = 0
        public var refunded: Int64 = 0
    }

    /// Refunds verifyReceipt cannot value as Apple did: the truth's amount and the catalog's.
    public struct Apart: Sendable, Equatable {
        public var count = 0
        public var truth: Int64 = 0
        public var catalog: Int64 = 0
    }

    /// One currency's comparison.
    public struct Currency: Sendable, Equatable {
        public var code: String
        /// The comparable truth: paid purchases in the period, and full refunds at today's price.
        public var expected = Figures()
        /// The run's catalog money less the catalog's value of the refunds kept apart.
        public var found = Figures()
        public var prorated = Apart()
        public var priceChanged = Apart()
        /// Production transactions of the period the run did not read (truth amounts).
        public var unseen = Figures()
        /// revenue.json's `period` gross and refunded, and the same recomputed from ledger.jsonl.
        public var revenuePeriod: [Int64] = [0, 0]
        public var ledgerPeriod: [Int64] = [0, 0]

        public var matches: Bool { expected == found && revenuePeriod == ledgerPeriod }
    }

    public struct Report: Sendable {
        public var currencies: [String: Currency] = [:]
        public var note: String?
        public var periodMismatch: String?

        public var matches: Bool {
            periodMismatch == nil && !currencies.isEmpty && currencies.values.allSatisfy(\.matches)
        }

        /// The lines the demo prints.
        public func lines() -> [String] {
            var out: [String] = []
            if let note { out.append(note) }
            if let periodMismatch { out.append("  PERIOD DIFFERS: \(periodMismatch)") }
            for code in currencies.keys.sorted() {
                guard let c = currencies[code] else { continue }
                let f = { CurrencyFormat.format(milliunits: $0, currency: code) }
                func text(_ v: Figures) -> String {
                    "gross \(f(v.gross)) (\(v.purchases) paid purchases), full refunds at today's price "
                        + "\(f(v.refunded)) (\(v.refunds))"
                }
                out.append(
                    "catalog money \(code) \(c.expected == c.found ? "matches" : "DIFFERS from") the simulator's truth: "
                        + text(c.found)
                )
                if c.expected != c.found { out.append("  expected \(text(c.expected))") }
                if c.prorated.count > 0 {
                    out.append(
                        "  \(code) prorated refunds: not visible through verifyReceipt (no refunded share); the "
                            + "simulator's truth has \(c.prorated.count), amount \(f(c.prorated.truth)); the catalog "
                            + "values them in full: \(f(c.prorated.catalog))"
                    )
                }
                if c.priceChanged.count > 0 {
                    out.append(
                        "  \(code) refunds of purchases made before a price change: the catalog has today's prices; "
                            + "the simulator's truth has \(c.priceChanged.count), amount \(f(c.priceChanged.truth)); "
                            + "catalog \(f(c.priceChanged.catalog))"
                    )
                }
                if c.unseen.purchases + c.unseen.refunds > 0 {
                    out.append(
                        "  \(code) not read through verifyReceipt (receipts Apple refused, rows not due, one-time purchases): "
                            + "\(c.unseen.purchases) paid purchases \(f(c.unseen.gross)), \(c.unseen.refunds) refunds "
                            + f(c.unseen.refunded)
                    )
                }
                if c.revenuePeriod != c.ledgerPeriod {
                    out.append(
                        "  \(code) ledger.jsonl's period (gross \(f(c.ledgerPeriod[0])), refunded "
                            + "\(f(c.ledgerPeriod[1]))) DIFFERS from revenue.json's (gross \(f(c.revenuePeriod[0])), "
                            + "refunded \(f(c.revenuePeriod[1])))"
                    )
                }
            }
            return out
        }
    }

    public let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// Compares run `runId`'s catalog money with the files of the simulator's `server-api` export folder.
    public func compare(runId: Int64, exportDirectory directory: String) throws -> Report {
        var report = Report()
        let revenueFile = directory + "/revenue.json"
        guard let data = FileManager.default.contents(atPath: revenueFile),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let period = object["period"] as? [String: Any],
            let startText = period["start"] as? String, let start = RFC3339.parse(startText),
            let endText = period["end"] as? String, let end = RFC3339.parse(endText),
            let truthCurrencies = period["currencies"] as? [String: [String: Any]]
        else { throw UsageError("\(revenueFile): no period in the simulator's revenue.json") }
        let summary = try ReportGenerator(connection: connection).summary(runId: runId).summary
        report.note = "catalog money of run \(runId) against the simulator's truth for \(startText) to \(endText)"
        guard let runPeriod = summary.period, RFC3339.parse(runPeriod.start) == start,
            RFC3339.parse(runPeriod.end) == end
        else {
            report.periodMismatch =
                "run \(runId) covers \(summary.period.map { "\($0.start) to \($0.end)" } ?? "no period")"
            return report
        }
        let prices = try connection.transaction { db in
            let (_, schema) = try ReportLoader.beginSnapshot(db, runId: runId)
            return try ReportLoader.prices(db, schema: schema)
        }
        let pricing = CatalogPricing(prices: prices)
        let seen = Set(
            try connection.query("SELECT transaction_id FROM subscription_transactions WHERE price_milliunits IS NULL")
                .map { try $0.decode("transaction_id", as: String.self) }
        )
        func inPeriod(_ text: Any?) -> Bool {
            guard let date = (text as? String).flatMap(RFC3339.parse) else { return false }
            return date > start && date <= end
        }
        try addLedger(file: directory + "/ledger.jsonl", inPeriod: inPeriod, seen: seen, pricing: pricing, to: &report)
        try addOneTimeCharges(file: directory + "/one-time-charges.jsonl", inPeriod: inPeriod, to: &report)
        addFound(summary.money.catalog, revenuePeriod: truthCurrencies, to: &report)
        return report
    }

    /// The production transactions of `ledger.jsonl` purchased or refunded in the period, except family-shared and
    /// free ones: each counts in its currency's ledger period, and as expected or unseen (see `addTransaction`).
    private func addLedger(
        file ledgerFile: String,
        inPeriod: (Any?) -> Bool,
        seen: Set<String>,
        pricing: CatalogPricing,
        to report: inout Report
    ) throws {
        guard let ledger = FileManager.default.contents(atPath: ledgerFile) else {
            throw UsageError("cannot read \(ledgerFile)")
        }
        for (number, line) in ledger.split(separator: UInt8(ascii: "\n")).enumerated() where !line.isEmpty {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                let transactions = object["transactions"] as? [[String: Any]]
            else { throw UsageError("\(ledgerFile) line \(number + 1): not a ledger line") }
            guard object["environment"] as? String == "Production" else { continue }
            for t in transactions {
                addTransaction(t, inPeriod: inPeriod, seen: seen, pricing: pricing, to: &report)
            }
        }
    }

    /// One ledger transaction: a paid one purchased or refunded in the period counts in the ledger period; one the
    /// run never read (not in `seen`) is unseen, else its purchase is expected and its refund is expected or kept
    /// apart (see `addRefund`).
    private func addTransaction(
        _ t: [String: Any],
        inPeriod: (Any?) -> Bool,
        seen: Set<String>,
        pricing: CatalogPricing,
        to report: inout Report
    ) {
        guard let id = t["transaction_id"] as? String, let code = t["currency"] as? String,
            let product = t["product_id"] as? String,
            let price = (t["price"] as? NSNumber)?.int64Value, price > 0,
            t["ownership_type"] as? String != "FAMILY_SHARED"
        else { return }
        let purchased = inPeriod(t["purchase_date"])
        let refunded = inPeriod(t["revocation_date"])
        guard purchased || refunded else { return }
        let amount = (t["refunded_amount"] as? NSNumber)?.int64Value ?? 0
        var c = report.currencies[code] ?? Currency(code: code)
        defer { report.currencies[code] = c }
        if purchased { c.ledgerPeriod[0] += price }
        if refunded { c.ledgerPeriod[1] += amount }
        if !seen.contains(id) {
            if purchased {
                c.unseen.purchases += 1
                c.unseen.gross += price
            }
            if refunded {
                c.unseen.refunds += 1
                c.unseen.refunded += amount
            }
            return
        }
        if purchased {
            c.expected.purchases += 1
            c.expected.gross += price
        }
        if refunded {
            let catalog: Int64
            switch pricing.price(
                productId: product,
                subscriptionCurrency: code,
                isTrial: false,
                isIntroOffer: t["offer"] as? String == "pay_as_you_go"
            ) {
            case .priced(_, let milliunits): catalog = milliunits
            case .unpriced: catalog = 0
            }
            addRefund(t, price: price, amount: amount, catalog: catalog, to: &c)
        }
    }

    /// A refund of a transaction the run read, refunded `amount` of its `price`, which the catalog values at
    /// `catalog`: prorated refunds and refunds of purchases made at another price are kept apart, the rest expected.
    private func addRefund(_ t: [String: Any], price: Int64, amount: Int64, catalog: Int64, to c: inout Currency) {
        if t["revocation_type"] as? String == "REFUND_PRORATED" {
            c.prorated.count += 1
            c.prorated.truth += amount
            c.prorated.catalog += catalog
        } else if catalog != price {
            c.priceChanged.count += 1
            c.priceChanged.truth += amount
            c.priceChanged.catalog += catalog
        } else {
            c.expected.refunds += 1
            c.expected.refunded += amount
        }
    }

    /// For every currency of the truth, the run or the ledger: revenue.json's period, and what the run found (its
    /// catalog money less the catalog's value of the refunds kept apart).
    private func addFound(
        _ catalog: MoneyByCurrency,
        revenuePeriod truthCurrencies: [String: [String: Any]],
        to report: inout Report
    ) {
        for code in Set(truthCurrencies.keys).union(catalog.codes).union(report.currencies.keys) {
            var c = report.currencies[code] ?? Currency(code: code)
            let truth = truthCurrencies[code] ?? [:]
            c.revenuePeriod = ["gross", "refunded"].map { (truth[$0] as? NSNumber)?.int64Value ?? 0 }
            let t = catalog.currencies[code]?.totals
            c.found = Figures(
                purchases: t?.paidTransactions ?? 0,
                gross: t?.grossMilliunits ?? 0,
                refunds: (t?.refunds ?? 0) - c.prorated.count - c.priceChanged.count,
                refunded: (t?.refundedMilliunits ?? 0) - c.prorated.catalog - c.priceChanged.catalog
            )
            report.currencies[code] = c
        }
    }

    /// One-time purchases of the period (`one-time-charges.jsonl`, when the export has it): money in revenue.json's
    /// period that verifyReceipt never shows (they reach the ledger only through their notifications).
    private func addOneTimeCharges(file: String, inPeriod: (Any?) -> Bool, to report: inout Report) throws {
        guard let data = FileManager.default.contents(atPath: file) else { return }
        for (number, line) in data.split(separator: UInt8(ascii: "\n")).enumerated() where !line.isEmpty {
            guard let t = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                let code = t["currency"] as? String, let price = (t["price"] as? NSNumber)?.int64Value
            else { throw UsageError("\(file) line \(number + 1): not a one-time purchase") }
            var c = report.currencies[code] ?? Currency(code: code)
            if inPeriod(t["purchase_date"]) {
                c.ledgerPeriod[0] += price
                c.unseen.purchases += 1
                c.unseen.gross += price
            }
            if t["refunded"] as? Bool == true, inPeriod(t["revocation_date"]) {
                c.ledgerPeriod[1] += price
                c.unseen.refunds += 1
                c.unseen.refunded += price
            }
            report.currencies[code] = c
        }
    }
}
