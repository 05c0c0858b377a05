import Foundation

/// Renders trends.html: one self-contained, printable page (inline CSS and SVG, no scripts, no external
/// assets) of the daily snapshots (docs/reports.md, "Trends across nights"). Amounts are never added across currencies:
/// each currency has its own MRR chart and rows. Every value is escaped.
enum TrendsHTML {
    /// The `id`s of the charts always present (scripts/check-reports checks them); one
    /// `chart-trend-mrr-<CUR>` follows per priced currency.
    static let chartIds = ["chart-trend-states", "chart-trend-flows"]

    /// Days shown in the flow chart and the movement table (the CSV holds every day).
    static let recentDays = 31

    private static func e(_ text: String) -> String { HTMLText.escape(text) }

    private static func amount(_ milliunits: Int64?, _ currency: String) -> String {
        TrendsCSV.amount(milliunits, currency)
    }

    /// The snapshot rows by day, and the currencies priced in them.
    private struct Days {
        let dates: [String]
        let byDate: [String: [TrendRow]]
        let currencies: [String]

        init(_ rows: [TrendRow]) {
            dates = Array(Set(rows.map(\.date))).sorted()
            byDate = Dictionary(grouping: rows, by: \.date)
            currencies = Array(Set(rows.map(\.currency).filter { !$0.isEmpty })).sorted()
        }

        /// The rows of the latest day.
        var latest: [TrendRow] { dates.last.map { rows(of: $0) } ?? [] }

        /// The last `recentDays` days.
        var recent: [String] { Array(dates.suffix(recentDays)) }

        func rows(of date: String) -> [TrendRow] { byDate[date] ?? [] }

        func rows(of date: String, in currency: String) -> [TrendRow] {
            rows(of: date).filter { $0.currency == currency }
        }

        /// `value` summed over the rows of `date`, every currency.
        func total(_ date: String, _ value: (TrendRow) -> Int) -> Int { rows(of: date).map(value).reduce(0, +) }
    }

    static func render(rows: [TrendRow], days: Int) -> String {
        let trend = Days(rows)
        return header(trend, days: days) + latestSection(trend) + statesSection(trend) + mrrSection(trend)
            + flowsSection(trend) + movementSection(trend) + latestTable(trend.latest)
                + """
                <footer>Written by renewal-reconciler from trend_snapshots. Every figure, its source and what a rebuild \
                can recompute: docs/reports.md, "Trends across nights". trends.csv holds every row of these days.</footer>
                </body>
                </html>

                """
    }

    /// The document's start, the title and what the page covers.
    private static func header(_ trend: Days, days: Int) -> String {
        let dates = trend.dates
        return ReportHTML.documentStart(
            title: "Subscription trends (\(dates.first ?? "no snapshots") to \(dates.last ?? ""))"
        )
            + """
            <h1>Subscription trends</h1>
            <p class="meta">Daily snapshots of the last \(days) days: \(dates.count) day(s) with a snapshot\
            \(dates.isEmpty ? "" : ", \(e(dates.first!)) to \(e(dates.last!))") (UTC). One snapshot per day, \
            taken after the day's last completed run. Amounts in different currencies are never added together.</p>

            """
    }

    /// The latest day's headline: a card per state counted, then the MRR of each currency.
    private static func latestSection(_ trend: Days) -> String {
        let latest = trend.latest
        var html =
            "<section><h2>Latest day\(trend.dates.last.map { " (\(e($0)))" } ?? "")</h2><div class=\"headline\">\n"
        let cards: [(label: String, value: (TrendRow) -> Int)] = [
            ("active", \.active), ("grace period", \.gracePeriod), ("billing retry", \.billingRetry),
            ("in trial", \.inTrial), ("in intro offer", \.inIntroOffer),
        ]
        for card in cards {
            let value = latest.map(card.value).reduce(0, +)
            html +=
                "<div class=\"card\"><div class=\"num\">\(value)</div><div class=\"lbl\">\(e(card.label))</div></div>\n"
        }
        for currency in trend.currencies {
            let mrr = latest.filter { $0.currency == currency }.compactMap(\.mrr).reduce(0, +)
            html += "<div class=\"card\"><div class=\"num\">\(e(amount(mrr, currency)))</div>"
            html += "<div class=\"lbl\">MRR \(e(currency))</div></div>\n"
        }
        return html + "</div></section>\n"
    }

    /// The chart of subscriptions by state, a point a day.
    private static func statesSection(_ trend: Days) -> String {
        let stateSeries: [(String, String, (TrendRow) -> Int)] = [
            ("active", "#2e7d32", \.active), ("grace period", "#f9a825", \.gracePeriod),
            ("billing retry", "#ef6c00", \.billingRetry), ("in trial", "#1565c0", \.inTrial),
        ]
        let states = SVGLineChart(
            id: "chart-trend-states",
            title: "Subscriptions by state",
            labels: trend.dates,
            series: stateSeries.map { name, color, value in
                .init(name: name, color: color, values: trend.dates.map { Double(trend.total($0, value)) })
            },
            axisLabel: { String(Int($0.rounded())) }
        )
        return "<section><h2>Subscriptions by state</h2><figure>\(states.render())</figure></section>\n"
    }

    /// A chart of MRR per currency (a day without a priced row has no point).
    private static func mrrSection(_ trend: Days) -> String {
        var html = "<section><h2>MRR per currency</h2>\n"
        html += "<p class=\"note\">Monthly recurring revenue: each active or grace-period, auto-renewing, paid "
        html += "subscription at the price it renews at (Apple's renewal price, else its latest transaction's or "
        html += "the catalog's), normalised to a month. Subscriptions without a usable price are "
        html += "counted in the tables (currency \"unpriced\") and never in an amount.</p>\n"
        if trend.currencies.isEmpty { html += "<p class=\"note\">No priced subscriptions in these days.</p>\n" }
        for currency in trend.currencies {
            let digits = CurrencyFormat.minorUnitDigits(currency)
            let values = trend.dates.map { date -> Double? in
                let amounts = trend.rows(of: date, in: currency).compactMap(\.mrr)
                return amounts.isEmpty ? nil : Double(amounts.reduce(0, +)) / 1000
            }
            let chart = SVGLineChart(
                id: "chart-trend-mrr-\(currency)",
                title: "MRR (\(currency))",
                labels: trend.dates,
                series: [.init(name: "MRR \(currency)", color: "#1565c0", values: values)],
                axisLabel: { String(format: "%.\(digits)f", $0) }
            )
            html += "<h3>\(e(currency))</h3><figure>\(chart.render())</figure>\n"
        }
        return html + "</section>\n"
    }

    /// The bar chart of subscriptions moving per recent day.
    private static func flowsSection(_ trend: Days) -> String {
        let recent = trend.recent
        let flowSeries: [(String, String, (TrendRow) -> Int)] = [
            ("new", "#2e7d32", \.newSubscriptions), ("reactivated", "#00897b", \.reactivated),
            ("trial conversions", "#1565c0", \.trialConversions), ("lapsed", "#f9a825", \.lapsed),
            ("churned", "#ef6c00", \.churned), ("refunded", "#c62828", \.refunded),
        ]
        let flows = SVGBarChart(
            id: "chart-trend-flows",
            title: "Subscriptions moving, per day",
            series: flowSeries.map { SVGBarChart.Series(name: $0.0, color: $0.1) },
            rows: recent.map { date in
                SVGBarChart.Row(label: date, values: flowSeries.map { trend.total(date, $0.2) })
            }
        )
        return "<section><h2>Subscriptions moving (last \(recent.count) day(s))</h2><figure>\(flows.render())</figure>"
            + "</section>\n"
    }

    /// MRR and its movement per recent day and currency, a row for each with snapshot rows.
    private static func movementSection(_ trend: Days) -> String {
        let recent = trend.recent
        var movement: [[String]] = []
        for date in recent {
            for currency in trend.currencies {
                let group = trend.rows(of: date, in: currency)
                guard !group.isEmpty else { continue }
                func sum(_ value: (TrendRow) -> Int64?) -> String {
                    amount(group.compactMap(value).reduce(0, +), currency)
                }
                movement.append([
                    date, currency, sum(\.mrr), sum(\.mrrNew), sum(\.mrrExpansion), sum(\.mrrContraction),
                    sum(\.mrrChurn),
                ])
            }
        }
        return "<section class=\"rows\"><h2>MRR movement per currency (last \(recent.count) day(s))</h2>\n"
            + ReportHTML.table(
                columns: ["date", "currency", "MRR", "new", "expansion", "contraction", "churn"],
                rows: movement,
                numericFrom: 2
            ) + "</section>\n"
    }

    /// Every row of the latest day.
    private static func latestTable(_ latest: [TrendRow]) -> String {
        let table = ReportHTML.table(
            columns: [
                "app", "product", "currency", "active", "grace", "retry", "trial", "intro", "new", "renewed", "lapsed",
                "churned", "refunded", "reactivated", "trial conv.", "MRR", "MRR source",
            ],
            rows: latest.map { row in
                [
                    row.bundleId, row.productId, row.currency.isEmpty ? "unpriced" : row.currency, "\(row.active)",
                    "\(row.gracePeriod)", "\(row.billingRetry)", "\(row.inTrial)", "\(row.inIntroOffer)",
                    "\(row.newSubscriptions)", "\(row.renewed)", "\(row.lapsed)", "\(row.churned)", "\(row.refunded)",
                    "\(row.reactivated)", "\(row.trialConversions)", amount(row.mrr, row.currency), row.mrrSource,
                ]
            },
            numericFrom: 3,
            small: true
        )
        return "<section class=\"rows\"><h2>Latest day per app, product and currency</h2><div class=\"scroll\">\n"
            + table + "</div></section>\n"
    }
}
