import AppleReports

/// The tie-out of a window: its rows, the unexplained events listed one by one, the headline per currency and what
/// the comparison could not see (docs/tie-out.md, "Reading the files").
public struct TieOutResult: Sendable {
    public var from: PacificDay
    public var to: PacificDay
    /// The fiscal month asked for (`--fiscal-month`), nil for a date range.
    public var fiscalMonth: AppleFiscalMonth?
    public var fiscalMonthsCompared: [AppleFiscalMonth]
    public var rows: [TieOutRow]
    /// Money Apple reports that the ledger lacks: lost orders to backfill, in (day, file, line) order.
    public var appleOnly: [TieOutAppleEvent]
    /// Ledger money Apple never reported, in (day, instant, transaction id) order.
    public var ledgerOnly: [TieOutLedgerEvent]
    public var headline: [TieOutCurrencyHeadline]
    /// What limits the comparison (days without a Subscriber report, months without a Financial report, ledger rows
    /// without a price, Apple IDs without a product), one sentence each.
    public var notes: [String]
    public var commission: CommissionPolicy

    /// Totals per view, measure, currency (and Apple's currency): the sums of the rows.
    public struct Total: Sendable, Equatable {
        public var view: TieOutRow.View
        public var measure: TieOutRow.Measure
        public var currency: String
        public var appleCurrency: String
        public var ledgerAmount: Int64 = 0
        public var appleAmount: Int64 = 0
        public var difference: Int64?
        public var byCause: [TieOutCause: Int64] = [:]
    }

    public var totals: [Total] {
        var totals: [String: Total] = [:]
        for row in rows {
            let k = row.key
            let id = "\(k.view.rawValue)|\(k.measure.rawValue)|\(k.currency)|\(k.appleCurrency)"
            var total =
                totals[id]
                ?? Total(
                    view: k.view,
                    measure: k.measure,
                    currency: k.currency,
                    appleCurrency: k.appleCurrency,
                    difference: k.currency == k.appleCurrency ? 0 : nil
                )
            total.ledgerAmount += row.ledgerAmount
            total.appleAmount += row.appleAmount
            if let difference = row.difference {
                total.difference = (total.difference ?? 0) + difference
                total.byCause[k.cause, default: 0] += difference
            }
            totals[id] = total
        }
        return totals.values.sorted {
            ($0.view, $0.measure, $0.currency, $0.appleCurrency) < ($1.view, $1.measure, $1.currency, $1.appleCurrency)
        }
    }

    /// Rows whose cause is `unexplained` with a difference other than zero.
    public var unexplainedRows: [TieOutRow] {
        rows.filter { $0.key.cause == .unexplained && ($0.difference ?? 1) != 0 }
    }

    /// `2026-10 (fiscal month, 2026-09-27 to 2026-10-31)` or `2026-11-01 to 2026-11-07`.
    public var periodText: String {
        fiscalMonth.map { "\($0.name) (fiscal month, \(from) to \(to))" } ?? "\(from) to \(to)"
    }
}

extension TieOutResult {
    /// The period as the files' `period` column names it: the fiscal month (`2026-10`) or `FROM..TO`.
    public var periodLabel: String { fiscalMonth?.name ?? "\(from)..\(to)" }
}
