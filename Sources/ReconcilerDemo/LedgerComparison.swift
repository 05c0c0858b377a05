import CivilTime
import Foundation
import Postgres
import Reconciler

/// Compares the priced ledger and the reports' money with the simulator's money truth (docs/simulator.md,
/// "Export files"): every transaction of `server-api/ledger.jsonl` must be in `subscription_transactions`
/// with the same price, currency, storefront, revocation type and percentage; the money of every run's report
/// (its period and its history found), summed per currency, must equal `server-api/revenue.json` (gross,
/// refunded, net); and the period money of one run (`periodRunId`) must equal revenue.json's `period` to the
/// minor unit (gross, full and prorated refunds). Only meaningful after runs through the App Store Server API
/// that left nothing unresolved.
public struct LedgerComparison {
    /// What differed, the same shape as the row comparison's.
    public typealias Mismatch = TruthComparison.Mismatch

    public struct Report: Sendable {
        public var transactionsCompared = 0
        public var transactionsMatched = 0
        /// Per currency: (expected, found) gross, refunded and net milliunits.
        public var currencies: [String: (expected: [Int64], found: [Int64])] = [:]
        /// Per currency, for the period of `periodRunId`: (expected, found) gross, refunded in full, refunded
        /// prorated and net milliunits.
        public var periodCurrencies: [String: (expected: [Int64], found: [Int64])] = [:]
        /// What the period comparison covered, or why it did not run.
        public var periodNote: String?
        /// The run's period differs from revenue.json's (start and end).
        public var periodMismatch: String?
        public var mismatches: [Mismatch] = []
        public var mismatchCount = 0

        public var moneyMatches: Bool {
            currencies.values.allSatisfy { $0.expected == $0.found }
                && periodCurrencies.values.allSatisfy { $0.expected == $0.found } && periodMismatch == nil
        }
        public var matches: Bool {
            transactionsCompared > 0 && transactionsMatched == transactionsCompared && moneyMatches
        }

        /// The lines the demo and `compare-truth` print.
        public func lines(limit: Int = 20) -> [String] {
            var out = [
                "ledger against the simulator's ledger.jsonl: \(transactionsMatched)/\(transactionsCompared) transactions match"
            ]
            for code in currencies.keys.sorted() {
                guard let pair = currencies[code] else { continue }
                let verdict = pair.expected == pair.found ? "matches" : "DIFFERS"
                func text(_ v: [Int64]) -> String {
                    "gross \(CurrencyFormat.format(milliunits: v[0], currency: code)), refunded "
                        + "\(CurrencyFormat.format(milliunits: v[1], currency: code)), net "
                        + CurrencyFormat.format(milliunits: v[2], currency: code)
                }
                out.append("money \(code) \(verdict) revenue.json: \(text(pair.found))")
                if pair.expected != pair.found { out.append("  expected \(text(pair.expected))") }
            }
            if let periodNote { out.append(periodNote) }
            if let periodMismatch { out.append("  PERIOD DIFFERS: \(periodMismatch)") }
            for code in periodCurrencies.keys.sorted() {
                guard let pair = periodCurrencies[code] else { continue }
                let verdict = pair.expected == pair.found ? "matches" : "DIFFERS"
                func text(_ v: [Int64]) -> String {
                    let f = { CurrencyFormat.format(milliunits: $0, currency: code) }
                    return "gross \(f(v[0])), refunded full \(f(v[1])), prorated \(f(v[2])), net \(f(v[3]))"
                }
                out.append("period money \(code) \(verdict) revenue.json: \(text(pair.found))")
                if pair.expected != pair.found { out.append("  expected \(text(pair.expected))") }
            }
            for m in mismatches.prefix(limit) { out.append("  \(m)") }
            if mismatchCount > min(limit, mismatches.count) {
                out.append("  ... and \(mismatchCount - min(limit, mismatches.count)) more")
            }
            return out
        }
    }

    public let connection: PostgresConnection
    public var detailLimit = 50
    /// Subscriptions whose every answer the simulator forges (see `TruthComparison.forgedSubscriptions`): none
    /// of their transactions may reach the ledger, and their money is not in the reports.
    public var forgedSubscriptions: Set<String> = []
    /// The run whose period money is compared with revenue.json's `period` (nil: not compared).
    public var periodRunId: Int64?

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// Compares with the files of the simulator's `server-api` export folder `directory`.
    public func compare(exportDirectory directory: String) throws -> Report {
        var report = Report()
        var forgedTransactions: [[String: Any]] = []
        let forgedMoney = try compareLedger(
            file: directory + "/ledger.jsonl",
            forgedTransactions: &forgedTransactions,
            into: &report
        )
        let oneTime = directory + "/one-time-charges.jsonl"
        if FileManager.default.fileExists(atPath: oneTime) { try compareOneTimeCharges(file: oneTime, into: &report) }
        try compareMoney(file: directory + "/revenue.json", without: forgedMoney, into: &report)
        if let periodRunId {
            try comparePeriod(
                file: directory + "/revenue.json",
                runId: periodRunId,
                without: forgedTransactions,
                into: &report
            )
        }
        return report
    }

    private struct Expected {
        var otid: String
        var transactionId: String
        /// nil: the transaction must not be in the ledger (a forged subscription).
        var fields: [String: String]?
    }

    /// Returns the production money (gross, refunded) per currency of the forged subscriptions, and collects
    /// their production transactions in `forgedTransactions`.
    private func compareLedger(
        file: String,
        forgedTransactions: inout [[String: Any]],
        into report: inout Report
    ) throws -> [String: [Int64]] {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw UsageError("cannot read \(file)")
        }
        var forgedMoney: [String: [Int64]] = [:]
        var batch: [Expected] = []
        for (number, line) in data.split(separator: UInt8(ascii: "\n")).enumerated() where !line.isEmpty {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                let otid = object["original_transaction_id"] as? String,
                let transactions = object["transactions"] as? [[String: Any]]
            else { throw UsageError("\(file) line \(number + 1): not a ledger line") }
            let forged = forgedSubscriptions.contains(otid)
            for t in transactions {
                guard let id = t["transaction_id"] as? String else {
                    throw UsageError("\(file) line \(number + 1): a transaction without transaction_id")
                }
                if forged {
                    if object["environment"] as? String == "Production", let currency = t["currency"] as? String,
                        t["ownership_type"] as? String != "FAMILY_SHARED"
                    {
                        var sums = forgedMoney[currency] ?? [0, 0]
                        sums[0] += (t["price"] as? NSNumber)?.int64Value ?? 0
                        sums[1] += (t["refunded_amount"] as? NSNumber)?.int64Value ?? 0
                        forgedMoney[currency] = sums
                        forgedTransactions.append(t)
                    }
                    batch.append(Expected(otid: otid, transactionId: id, fields: nil))
                    continue
                }
                var fields = [
                    "price_milliunits": TruthText.of(t["price"]),
                    "currency": TruthText.of(t["currency"]),
                    "storefront": TruthText.of(t["storefront"]),
                    "revocation_type": TruthText.of(t["revocation_type"]),
                    "revocation_percentage": TruthText.of(t["revocation_percentage"]),
                ]
                // What Apple's signed transaction says of the customer and the offer, where the export states it.
                for key in Self.statedColumns where t.keys.contains(key) { fields[key] = TruthText.of(t[key]) }
                batch.append(Expected(otid: otid, transactionId: id, fields: fields))
            }
            if batch.count >= 2000 {
                try compareBatch(batch, into: &report)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { try compareBatch(batch, into: &report) }
        return forgedMoney
    }

    /// Ledger columns compared only when the export states them (older exports do not).
    private static let statedColumns = [
        "offer_type", "offer_identifier", "offer_period", "ownership_type", "billing_plan_type", "app_account_token",
    ]

    /// The one-time purchases the simulator made (`one-time-charges.jsonl`): each in the ledger as `one_time`
    /// (`refund` once refunded) with its price, currency and storefront, read from its notification.
    private func compareOneTimeCharges(file: String, into report: inout Report) throws {
        guard let data = FileManager.default.contents(atPath: file) else { throw UsageError("cannot read \(file)") }
        var batch: [Expected] = []
        for (number, line) in data.split(separator: UInt8(ascii: "\n")).enumerated() where !line.isEmpty {
            guard let t = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                let id = t["transaction_id"] as? String
            else { throw UsageError("\(file) line \(number + 1): not a one-time purchase") }
            let fields = [
                "kind": t["refunded"] as? Bool == true ? "refund" : "one_time",
                "price_milliunits": TruthText.of(t["price"]), "currency": TruthText.of(t["currency"]),
                "storefront": TruthText.of(t["storefront"]),
            ]
            batch.append(Expected(otid: id, transactionId: id, fields: fields))
        }
        if !batch.isEmpty { try compareBatch(batch, into: &report) }
    }

    private func compareBatch(_ batch: [Expected], into report: inout Report) throws {
        let rows = try connection.query(
            """
            SELECT transaction_id, price_milliunits::text, currency, storefront, revocation_type,
                   revocation_percentage::text, kind, offer_type::text, offer_identifier, offer_period, ownership_type,
                   billing_plan_type, app_account_token
              FROM subscription_transactions WHERE transaction_id = ANY($1::text[])
            """,
            [batch.map { Optional($0.transactionId) }]
        )
        var found: [String: PostgresRow] = [:]
        for row in rows { found[try row.decode("transaction_id", as: String.self)] = row }
        for expected in batch {
            report.transactionsCompared += 1
            var problems: [Mismatch] = []
            if expected.fields == nil {
                if found[expected.transactionId] != nil {
                    problems.append(
                        Mismatch(
                            originalTransactionId: expected.otid,
                            scenario: "transaction \(expected.transactionId)",
                            field: "ledger row of a forged answer",
                            expected: "absent",
                            actual: "present"
                        )
                    )
                }
            } else if let row = found[expected.transactionId] {
                for (column, wanted) in (expected.fields ?? [:]).sorted(by: { $0.key < $1.key }) {
                    let actual = (try row.decode(column, as: String?.self)) ?? "null"
                    if actual != wanted {
                        problems.append(
                            Mismatch(
                                originalTransactionId: expected.otid,
                                scenario: "transaction \(expected.transactionId)",
                                field: column,
                                expected: wanted,
                                actual: actual
                            )
                        )
                    }
                }
            } else {
                problems.append(
                    Mismatch(
                        originalTransactionId: expected.otid,
                        scenario: "transaction \(expected.transactionId)",
                        field: "ledger row",
                        expected: "present",
                        actual: "missing"
                    )
                )
            }
            if problems.isEmpty {
                report.transactionsMatched += 1
            } else {
                report.mismatchCount += problems.count
                report.mismatches += problems.prefix(max(0, detailLimit - report.mismatches.count))
            }
        }
    }

    /// revenue.json against the money of every run's report (dry runs aside), summed per currency: each
    /// ledger transaction is first seen, and its refund seen, in exactly one run.
    private func compareMoney(file: String, without forged: [String: [Int64]], into report: inout Report) throws {
        guard let data = FileManager.default.contents(atPath: file),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let currencies = object["currencies"] as? [String: [String: Any]]
        else { throw UsageError("\(file): not the simulator's revenue.json") }
        var found: [String: [Int64]] = [:]
        let runs = try connection.query(
            "SELECT id FROM reconciliation_runs WHERE NOT dry_run ORDER BY id"
        )
        let generator = ReportGenerator(connection: connection)
        for run in runs {
            let summary = try generator.summary(runId: try run.decode("id", as: Int64.self)).summary
            // The period's money and the history the run found: together, everything the run counted.
            for (code, money) in summary.money.byCurrency.currencies.map({ $0 })
                + summary.money.historyFound.currencies.map({ $0 })
            {
                let t = money.totals
                var sums = found[code] ?? [0, 0, 0]
                sums[0] += t.grossMilliunits
                sums[1] += t.refundedMilliunits
                sums[2] += t.netMilliunits
                found[code] = sums
            }
        }
        for code in Set(currencies.keys).union(found.keys) {
            let c = currencies[code] ?? [:]
            let total = ["gross", "refunded"].map { (c[$0] as? NSNumber)?.int64Value ?? 0 }
            let less = forged[code] ?? [0, 0]
            let gross = total[0] - less[0]
            let refunded = total[1] - less[1]
            report.currencies[code] = ([gross, refunded, gross - refunded], found[code] ?? [0, 0, 0])
        }
    }

    /// revenue.json's `period` against the period money of run `runId`'s report: the same period (start and
    /// end), and per currency the same gross, full and prorated refunds, to the minor unit. The forged
    /// subscriptions' production transactions dated in the period are taken out of the expected figures.
    private func comparePeriod(
        file: String,
        runId: Int64,
        without forged: [[String: Any]],
        into report: inout Report
    ) throws {
        guard let data = FileManager.default.contents(atPath: file),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let period = object["period"] as? [String: Any],
            let startText = period["start"] as? String, let start = RFC3339.parse(startText),
            let endText = period["end"] as? String, let end = RFC3339.parse(endText),
            let currencies = period["currencies"] as? [String: [String: Any]]
        else { throw UsageError("\(file): no period in the simulator's revenue.json") }
        let summary = try ReportGenerator(connection: connection).summary(runId: runId).summary
        report.periodNote = "period of run \(runId) against revenue.json's period \(startText) to \(endText)"
        guard let runPeriod = summary.period, RFC3339.parse(runPeriod.start) == start,
            RFC3339.parse(runPeriod.end) == end
        else {
            report.periodMismatch =
                "run \(runId) covers \(summary.period.map { "\($0.start) to \($0.end)" } ?? "no period")"
            return
        }
        var less: [String: [Int64]] = [:]
        for t in forged {
            guard let currency = t["currency"] as? String, let price = (t["price"] as? NSNumber)?.int64Value,
                price > 0, t["ownership_type"] as? String != "FAMILY_SHARED"
            else { continue }
            var sums = less[currency] ?? [0, 0, 0]
            if let purchase = (t["purchase_date"] as? String).flatMap(RFC3339.parse), purchase > start,
                purchase <= end
            {
                sums[0] += price
            }
            if let revoked = (t["revocation_date"] as? String).flatMap(RFC3339.parse), revoked > start, revoked <= end {
                let amount = (t["refunded_amount"] as? NSNumber)?.int64Value ?? 0
                sums[t["revocation_type"] as? String == "REFUND_PRORATED" ? 2 : 1] += amount
            }
            less[currency] = sums
        }
        for code in Set(currencies.keys).union(summary.money.byCurrency.codes) {
            let c = currencies[code] ?? [:]
            let truth = ["gross", "refunded_full", "refunded_prorated"].map { (c[$0] as? NSNumber)?.int64Value ?? 0 }
            let minus = less[code] ?? [0, 0, 0]
            let expected = zip(truth, minus).map { $0 - $1 }
            let t = summary.money.byCurrency.currencies[code]?.totals
            let found = [t?.grossMilliunits ?? 0, t?.fullRefundedMilliunits ?? 0, t?.proratedRefundedMilliunits ?? 0]
            report.periodCurrencies[code] = (
                expected + [expected[0] - expected[1] - expected[2]], found + [found[0] - found[1] - found[2]]
            )
        }
    }
}
