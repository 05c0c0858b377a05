import Foundation
import Postgres
import Reconciler

/// Compares trends.csv (what the nightly runs recorded, docs/reports.md "Trends across nights") with the simulator's
/// `trend-truth.jsonl` (what Apple implies on each night, docs/simulator.md "Trends truth"), day by day.
///
/// - App Store Server API (`serverAPI`): per day, app, product and currency, the subscriptions active, in grace
///   period and in billing retry, churned, counted in MRR, and MRR itself to the minor unit.
/// - verifyReceipt: it carries no price, currency or storefront, so a row's currency is the catalog's (or empty) and
///   its MRR a catalog estimate, not Apple's price: per day, app and product (currencies added up) the counts are
///   compared, MRR is not.
///
/// A key present on one side only is compared with zeros. Every day of the truth must be in trends.csv and the
/// reverse.
public struct TrendTruthComparison {
    /// One figure that differs.
    public struct Mismatch: Sendable, CustomStringConvertible {
        public var date: String
        public var key: String
        public var field: String
        public var expected: String
        public var found: String
        public var description: String { "\(date) \(key): \(field) expected \(expected), found \(found)" }
    }

    public struct Report: Sendable {
        public var days: [String] = []
        public var rowsCompared = 0
        public var figuresCompared = 0
        public var mismatches: [Mismatch] = []
        /// Days in the truth missing from trends.csv, and the reverse.
        public var missingDays: [String] = []
        public var extraDays: [String] = []
        public var serverAPI = false
        public var matches: Bool { mismatches.isEmpty && missingDays.isEmpty && extraDays.isEmpty && !days.isEmpty }

        public func lines(limit: Int = 10) -> [String] {
            var lines = [
                "trends vs the simulator's truth (\(serverAPI ? "counts, churn and MRR" : "counts and churn; verifyReceipt has no prices")): "
                    + "\(days.count) days, \(rowsCompared) rows, \(figuresCompared) figures, "
                    + (matches ? "all equal" : "\(mismatches.count) differ")
            ]
            if !missingDays.isEmpty {
                lines.append("  days missing from trends.csv: \(missingDays.joined(separator: ", "))")
            }
            if !extraDays.isEmpty { lines.append("  days not in the truth: \(extraDays.joined(separator: ", "))") }
            lines += mismatches.prefix(limit).map { "  \($0)" }
            return lines
        }
    }

    /// Counts compared in both views; `mrr_subscriptions` and `mrr` only for the Server API.
    static let countColumns = ["active", "grace_period", "billing_retry", "churned"]
    static let serverAPIColumns = ["mrr_subscriptions", "mrr"]

    public var serverAPI: Bool
    /// Subscriptions the first night verified although the truth leaves them alone that night (`not_due`: a
    /// verifyReceipt client has no reason to ask, but the sweep re-verifies the least recently verified rows every
    /// night): the trends count them from that night on, so the truth's first day counts them too, with Apple's
    /// decision for them. By `bundle / product`, then state (`firstNightSweep`).
    public var firstNightExtras: [String: [String: Int64]] = [:]

    public init(serverAPI: Bool) {
        self.serverAPI = serverAPI
    }

    /// The `not_due` subscriptions of `truthFile` (truth.jsonl) that run `runId` took in its sweep, counted by the
    /// app of their row, the product and state truth.jsonl decides for them (`firstNightExtras`).
    public static func firstNightSweep(
        connection: PostgresConnection,
        runId: Int64,
        truthFile: String
    ) throws -> [String: [String: Int64]] {
        guard let data = FileManager.default.contents(atPath: truthFile) else {
            throw UsageError("cannot read \(truthFile)")
        }
        var notDue: [String: (product: String, state: String)] = [:]
        let marker = Data("\"expect\":\"not_due\"".utf8)
        for line in data.split(separator: UInt8(ascii: "\n")) where line.range(of: marker) != nil {
            guard let truth = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                truth["expect"] as? String == "not_due", let id = truth["original_transaction_id"] as? String,
                let product = truth["product_id"] as? String, let state = truth["state"] as? String
            else { continue }
            notDue[id] = (product, state)
        }
        let swept = try connection.query(
            """
            SELECT i.original_transaction_id AS id, COALESCE(s.bundle_id, 'app') AS bundle
              FROM reconciliation_items i JOIN subscriptions s ON s.id = i.subscription_id
             WHERE i.run_id = $1 AND i.due_reason = 'sweep'
            """,
            [runId]
        )
        var extras: [String: [String: Int64]] = [:]
        for row in swept {
            guard let truth = notDue[try row.decode("id", as: String.self)] else { continue }
            extras["\(try row.decode("bundle", as: String.self)) / \(truth.product)", default: [:]][
                truth.state,
                default: 0
            ] +=
                1
        }
        return extras
    }

    /// Compares the trends.csv at `trendsFile` with the `trend-truth.jsonl` at `truthFile`.
    public func compare(trendsFile: String, truthFile: String) throws -> Report {
        guard let csv = FileManager.default.contents(atPath: trendsFile) else {
            throw UsageError("cannot read \(trendsFile)")
        }
        guard let truth = FileManager.default.contents(atPath: truthFile) else {
            throw UsageError("cannot read \(truthFile)")
        }
        let columns = serverAPI ? Self.countColumns + Self.serverAPIColumns : Self.countColumns
        let found = try Self.figures(csv: String(decoding: csv, as: UTF8.self), columns: columns, byCurrency: serverAPI)
        var expected = try figures(truth: truth, columns: columns)
        if let first = expected.keys.map(\.date).min() {
            for (name, states) in firstNightExtras {
                for (state, count) in states where columns.contains(state) {
                    expected[Key(date: first, name: name), default: [:]][state, default: 0] += count
                }
            }
        }
        var report = Report(serverAPI: serverAPI)
        let foundDays = Set(found.keys.map(\.date))
        let expectedDays = Set(expected.keys.map(\.date))
        report.days = expectedDays.intersection(foundDays).sorted()
        report.missingDays = expectedDays.subtracting(foundDays).sorted()
        report.extraDays = foundDays.subtracting(expectedDays).sorted()
        let keys = Set(found.keys).union(expected.keys).filter { report.days.contains($0.date) }
        for key in keys.sorted(by: { ($0.date, $0.name) < ($1.date, $1.name) }) {
            report.rowsCompared += 1
            for column in columns {
                let want = expected[key]?[column] ?? 0
                let have = found[key]?[column] ?? 0
                report.figuresCompared += 1
                if want != have {
                    report.mismatches.append(
                        Mismatch(date: key.date, key: key.name, field: column, expected: "\(want)", found: "\(have)")
                    )
                }
            }
        }
        return report
    }

    struct Key: Hashable {
        var date: String
        /// `bundle_id / product_id` (`/ currency` when compared by currency).
        var name: String
    }

    /// trends.csv's figures by day and key; amounts in milliunits.
    static func figures(csv: String, columns: [String], byCurrency: Bool) throws -> [Key: [String: Int64]] {
        let records = csv.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map { line in
            line.trimmingCharacters(in: CharacterSet(charactersIn: "\r")).split(
                separator: ",",
                omittingEmptySubsequences: false
            )
            .map { String($0) }
        }
        guard let header = records.first else { throw UsageError("trends.csv is empty") }
        func index(_ name: String) throws -> Int {
            guard let i = header.firstIndex(of: name) else { throw UsageError("trends.csv has no column \(name)") }
            return i
        }
        let date = try index("date")
        let bundle = try index("bundle_id")
        let product = try index("product_id")
        let currency = try index("currency")
        let wanted = try columns.map { ($0, try index($0)) }
        var result: [Key: [String: Int64]] = [:]
        for record in records.dropFirst() where record.count == header.count {
            var name = "\(Self.unquoted(record[bundle])) / \(Self.unquoted(record[product]))"
            if byCurrency { name += " / \(record[currency])" }
            let key = Key(date: record[date], name: name)
            for (column, i) in wanted {
                let value = column == "mrr" ? Self.milliunits(record[i]) : Int64(record[i]) ?? 0
                result[key, default: [:]][column, default: 0] += value
            }
        }
        return result
    }

    /// The truth's figures of this comparison's view by day and key.
    func figures(truth: Data, columns: [String]) throws -> [Key: [String: Int64]] {
        let view = serverAPI ? "server_api" : "verify_receipt"
        var result: [Key: [String: Int64]] = [:]
        for line in truth.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                let date = object["date"] as? String, let bundle = object["bundle_id"] as? String,
                let product = object["product_id"] as? String, let currency = object["currency"] as? String
            else { throw UsageError("trend-truth.jsonl: a line without date, bundle_id, product_id, currency") }
            guard object["view"] as? String == view else { continue }
            var name = "\(bundle) / \(product)"
            if serverAPI { name += " / \(currency)" }
            let key = Key(date: date, name: name)
            for column in columns {
                result[key, default: [:]][column, default: 0] += (object[column] as? NSNumber)?.int64Value ?? 0
            }
        }
        return result
    }

    /// A CSV text cell as written (a leading `'` that neutralised a formula is not part of the value).
    static func unquoted(_ cell: String) -> String {
        var text = cell
        if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 {
            text = String(text.dropFirst().dropLast()).replacingOccurrences(of: "\"\"", with: "\"")
        }
        return text.hasPrefix("'") ? String(text.dropFirst()) : text
    }

    /// A plain decimal amount (`12.34`, `1500`, `-0.5`) in milliunits; 0 when empty.
    static func milliunits(_ text: String) -> Int64 {
        let negative = text.hasPrefix("-")
        let digits = negative ? String(text.dropFirst()) : text
        let parts = digits.split(separator: ".", omittingEmptySubsequences: false)
        let whole = Int64(parts.first ?? "") ?? 0
        let fraction = parts.count > 1 ? Int64(String((parts[1] + "000").prefix(3))) ?? 0 : 0
        let value = whole * 1000 + fraction
        return negative ? -value : value
    }
}
