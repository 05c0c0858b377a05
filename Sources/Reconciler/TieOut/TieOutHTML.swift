import AppleReports
import CivilTime

/// tieout.html: one self-contained page (the reports' stylesheet, inline SVG, no scripts): the matched share of money
/// per currency, charts of the differences by cause and by day, the unexplained events one by one and every row
/// with a difference (docs/tie-out.md, "Reading the files"). Every value is escaped.
enum TieOutHTML {
    /// The `id`s of the charts always present; one `chart-tieout-days-<CUR>` follows per currency.
    static let chartIds = ["chart-tieout-causes", "chart-tieout-proceeds-causes"]

    /// Fill colours of the causes in the charts.
    static let colors: [TieOutCause: String] = [
        .matched: "#9e9e9e", .timing: "#1565c0", .refundOtherPeriod: "#6a1b9a", .refundReversed: "#ad1457",
        .exchangeRate: "#00897b",
        .tax: "#f9a825", .familySharing: "#2e7d32", .commissionTier: "#ef6c00", .unexplained: "#c62828",
    ]

    private static func e(_ text: String) -> String { HTMLText.escape(text) }

    private static func money(_ milliunits: Int64, _ currency: String) -> String {
        CurrencyFormat.format(milliunits: milliunits, currency: currency)
    }

    /// An absolute amount in whole minor units, for a bar's length.
    private static func minorUnits(_ milliunits: Int64, _ currency: String) -> Int {
        Int(abs(milliunits) / CurrencyFormat.milliunitsPerMinorUnit(currency))
    }

    static func render(_ result: TieOutResult) -> String {
        ReportHTML.documentStart(title: "Tie-out with Apple (\(result.periodLabel))") + header(result)
            + headline(result) + notes(result) + causesChart(result, measure: .customerPrice)
            + causesChart(result, measure: .proceeds) + daysCharts(result)
            + unexplained(result)
            + differences(result, view: .daily) + differences(result, view: .monthly)
                + """
                <footer>Written by renewal-reconciler tie-out from the ledger (subscription_transactions) and Apple's \
                imported reports. Every column and cause: docs/tie-out.md. tieout.csv holds every row, tieout.json the \
                same with the totals.</footer>
                </body>
                </html>

                """
    }

    private static func header(_ result: TieOutResult) -> String {
        var meta = "Pacific days \(e(result.from.description)) to \(e(result.to.description))"
        if let month = result.fiscalMonth { meta = "Fiscal month <b>\(e(month.name))</b>: " + meta }
        let months = result.fiscalMonthsCompared.map(\.name)
        meta +=
            months.isEmpty
            ? ". No fiscal month's Financial report compared."
            : ". Financial report compared for fiscal month(s) \(e(months.joined(separator: ", ")))."
        meta += " Proceeds: \(e(result.commission.label))."
        return "<h1>Tie-out with Apple</h1>\n<p class=\"meta\">\(meta)</p>\n"
    }

    private static func headline(_ result: TieOutResult) -> String {
        var html = "<section><h2>Matched share of money</h2><div class=\"headline\">\n"
        if result.headline.isEmpty { html += "<p class=\"note\">No money on either side in these days.</p>\n" }
        for line in result.headline {
            html +=
                "<div class=\"card\"><div class=\"num\">\(e(TieOutCurrencyHeadline.percent(line.matchedShare)))</div>"
            html += "<div class=\"lbl\">\(e(line.currency)) matched (\(e(money(line.matchedMoney, line.currency))) of "
            html += "\(e(money(line.ledgerMoney + line.appleMoney, line.currency))) on both sides); "
            html += "\(e(TieOutCurrencyHeadline.percent(line.explainedShare))) explained</div></div>\n"
        }
        html += "<div class=\"card\"><div class=\"num\">\(result.appleOnly.count)</div>"
        html += "<div class=\"lbl\">lost orders (Apple only)</div></div>\n"
        html += "<div class=\"card\"><div class=\"num\">\(result.ledgerOnly.count)</div>"
        html += "<div class=\"lbl\">ledger only</div></div>\n"
        return html + "</div></section>\n"
    }

    private static func notes(_ result: TieOutResult) -> String {
        guard !result.notes.isEmpty else { return "" }
        return "<section><h2>What limits this tie-out</h2><ul>\n"
            + result.notes.map { "<li>\(e($0))</li>\n" }.joined() + "</ul></section>\n"
    }

    /// The daily view's customer-price rows with a difference, each with its absolute difference in minor units.
    private static func dailyDifferences(
        _ result: TieOutResult,
        measure: TieOutRow.Measure = .customerPrice
    ) -> [(TieOutRow, Int)] {
        result.rows.compactMap { row in
            guard row.key.view == .daily, row.key.measure == measure, let difference = row.difference,
                difference != 0
            else { return nil }
            return (row, minorUnits(difference, row.key.currency))
        }
    }

    /// Absolute differences per currency and cause of the daily `measure`, in minor units: the customer price, and
    /// the proceeds (where tax and the commission tier show).
    private static func causesChart(_ result: TieOutResult, measure: TieOutRow.Measure) -> String {
        var bars: [String: [TieOutCause: Int]] = [:]
        for (row, units) in dailyDifferences(result, measure: measure) {
            bars[row.key.currency, default: [:]][row.key.cause, default: 0] += units
        }
        let proceeds = measure == .proceeds
        let causes = TieOutCause.allCases.filter { $0 != .matched }
        let chart = SVGBarChart(
            id: proceeds ? "chart-tieout-proceeds-causes" : "chart-tieout-causes",
            title: proceeds
                ? "Proceeds differences by cause (the ledger's estimate against Apple's proceeds, minor units, absolute)"
                : "Differences by cause (daily customer price, minor units, absolute)",
            series: causes.map { SVGBarChart.Series(name: $0.rawValue, color: colors[$0] ?? "#999") },
            rows: bars.keys.sorted().map { currency in
                SVGBarChart.Row(label: currency, values: causes.map { bars[currency]?[$0] ?? 0 })
            }
        )
        let heading = proceeds ? "Proceeds differences by cause" : "Differences by cause"
        return "<section><h2>\(heading)</h2><figure>\(chart.render())</figure></section>\n"
    }

    /// Per currency, the absolute differences of each day by cause.
    private static func daysCharts(_ result: TieOutResult) -> String {
        var byCurrency: [String: [String: [TieOutCause: Int]]] = [:]
        for (row, units) in dailyDifferences(result) {
            byCurrency[row.key.currency, default: [:]][row.key.period, default: [:]][row.key.cause, default: 0] += units
        }
        var html = "<section><h2>Differences by day</h2>\n"
        if byCurrency.isEmpty { html += "<p class=\"note\">No differences in these days.</p>\n" }
        let causes = TieOutCause.allCases.filter { $0 != .matched }
        for currency in byCurrency.keys.sorted() {
            let days = byCurrency[currency] ?? [:]
            let chart = SVGBarChart(
                id: "chart-tieout-days-\(currency)",
                title: "Differences per day (\(currency), minor units, absolute)",
                series: causes.map { SVGBarChart.Series(name: $0.rawValue, color: colors[$0] ?? "#999") },
                rows: days.keys.sorted().map { day in
                    SVGBarChart.Row(label: day, values: causes.map { days[day]?[$0] ?? 0 })
                }
            )
            html += "<h3>\(e(currency))</h3><figure>\(chart.render())</figure>\n"
        }
        return html + "</section>\n"
    }

    private static func unexplained(_ result: TieOutResult) -> String {
        let lost = ReportHTML.table(
            columns: ["day", "product", "country", "customer price", "currency", "subscriber", "file", "line", "why"],
            rows: result.appleOnly.map {
                [
                    $0.day.description, $0.productKey, $0.country, money($0.amount, $0.currency), $0.currency,
                    $0.subscriberId ?? "", $0.fileName, "\($0.line)", TieOutComparison.lostOrderText($0),
                ]
            },
            numericFrom: nil,
            small: true
        )
        let ledger = ReportHTML.table(
            columns: ["transaction", "event", "at (UTC)", "Pacific day", "product", "country", "amount", "currency"],
            rows: result.ledgerOnly.map {
                [
                    $0.transactionId, $0.kind.rawValue, RFC3339.string($0.instant), $0.day.description, $0.productId,
                    $0.country, money($0.amount, $0.currency), $0.currency,
                ]
            },
            numericFrom: nil,
            small: true
        )
        return "<section class=\"rows\"><h2>Money Apple reports that the ledger lacks (lost orders)</h2>\n"
            + "<p class=\"note\">Each Subscriber report row no ledger transaction matches: find the purchase "
            + "(subscriber, day, product) and backfill it.</p><div class=\"scroll\">\n" + lost + "</div></section>\n"
            + "<section class=\"rows\"><h2>Ledger money Apple never reported</h2><div class=\"scroll\">\n" + ledger
            + "</div></section>\n"
    }

    private static func differences(_ result: TieOutResult, view: TieOutRow.View) -> String {
        let rows = result.rows.filter { $0.key.view == view && $0.key.cause != .matched }
        let title =
            view == .daily
            ? "Daily differences (ledger against the Subscriber report)"
            : "Monthly differences (estimated proceeds against the Financial report's partner share)"
        let table = ReportHTML.table(
            columns: [
                view == .daily ? "day" : "fiscal month", "product", "country", "currency", "measure", "cause",
                "ledger units", "ledger", "Apple units", "Apple", "difference", "detail",
            ],
            rows: rows.map { row in
                let k = row.key
                return [
                    k.period, k.productId, k.country, k.currency, k.measure.rawValue, k.cause.rawValue,
                    "\(row.ledgerUnits)", money(row.ledgerAmount, k.currency), "\(row.appleUnits)",
                    money(row.appleAmount, k.appleCurrency) + " " + k.appleCurrency,
                    row.difference.map { money($0, k.currency) } ?? "", row.detail,
                ]
            },
            numericFrom: nil,
            small: true
        )
        return "<section class=\"rows\"><h2>\(e(title))</h2><div class=\"scroll\">\n" + table + "</div></section>\n"
    }
}
