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

    static func render(rows: [TrendRow], days: Int) -> String {
        let dates = Array(Set(rows.map(\.date))).sorted()
        let byDate = Dictionary(grouping: rows, by: \.date)
        let currencies = Array(Set(rows.map(\.currency).filter { !$0.isEmpty })).sorted()
        let latest = dates.last.map { byDate[$0] ?? [] } ?? []
        func total(_ date: String, _ value: (TrendRow) -> Int) -> Int { (byDate[date] ?? []).map(value).reduce(0, +) }

        var html = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Subscription trends (\(e(dates.first ?? "no snapshots")) to \(e(dates.last ?? "")))</title>
            <style>\(ReportHTML.css)</style>
            </head>
            <body>
            <h1>Subscription trends</h1>
            <p class="meta">Daily snapshots of the last \(days) days: \(dates.count) day(s) with a snapshot\
            \(dates.isEmpty ? "" : ", \(e(dates.first!)) to \(e(dates.last!))") (UTC). One snapshot per day, \
            taken after the day's last completed run. Amounts in different currencies are never added together.</p>

            """
        html += "<section><h2>Latest day\(dates.last.map { " (\(e($0)))" } ?? "")</h2><div class=\"headline\">\n"
        let cards: [(String, Int)] = [
            ("active", latest.map(\.active).reduce(0, +)), ("grace period", latest.map(\.gracePeriod).reduce(0, +)),
            ("billing retry", latest.map(\.billingRetry).reduce(0, +)),
            ("in trial", latest.map(\.inTrial).reduce(0, +)),
            ("in intro offer", latest.map(\.inIntroOffer).reduce(0, +)),
        ]
        for (label, value) in cards {
            html += "<div class=\"card\"><div class=\"num\">\(value)</div><div class=\"lbl\">\(e(label))</div></div>\n"
        }
        for currency in currencies {
            let mrr = latest.filter { $0.currency == currency }.compactMap(\.mrr).reduce(0, +)
            html += "<div class=\"card\"><div class=\"num\">\(e(amount(mrr, currency)))</div>"
            html += "<div class=\"lbl\">MRR \(e(currency))</div></div>\n"
        }
        html += "</div></section>\n"

        let stateSeries: [(String, String, (TrendRow) -> Int)] = [
            ("active", "#2e7d32", \.active), ("grace period", "#f9a825", \.gracePeriod),
            ("billing retry", "#ef6c00", \.billingRetry), ("in trial", "#1565c0", \.inTrial),
        ]
        let states = SVGLineChart(
            id: "chart-trend-states",
            title: "Subscriptions by state",
            labels: dates,
            series: stateSeries.map { name, color, value in
                .init(name: name, color: color, values: dates.map { Double(total($0, value)) })
            },
            axisLabel: { String(Int($0.rounded())) }
        )
        html += "<section><h2>Subscriptions by state</h2><figure>\(states.render())</figure></section>\n"

        html += "<section><h2>MRR per currency</h2>\n"
        html += "<p class=\"note\">Monthly recurring revenue: each active or grace-period, auto-renewing, paid "
        html += "subscription's current price normalised to a month. Subscriptions without a usable price are "
        html += "counted in the tables (currency \"unpriced\") and never in an amount.</p>\n"
        if currencies.isEmpty { html += "<p class=\"note\">No priced subscriptions in these days.</p>\n" }
        for currency in currencies {
            let digits = CurrencyFormat.minorUnitDigits(currency)
            let chart = SVGLineChart(
                id: "chart-trend-mrr-\(currency)",
                title: "MRR (\(currency))",
                labels: dates,
                series: [
                    .init(
                        name: "MRR \(currency)",
                        color: "#1565c0",
                        values: dates.map { date in
                            let amounts = (byDate[date] ?? []).filter { $0.currency == currency }.compactMap(\.mrr)
                            return amounts.isEmpty ? nil : Double(amounts.reduce(0, +)) / 1000
                        }
                    )
                ],
                axisLabel: { String(format: "%.\(digits)f", $0) }
            )
            html += "<h3>\(e(currency))</h3><figure>\(chart.render())</figure>\n"
        }
        html += "</section>\n"

        let recent = Array(dates.suffix(recentDays))
        let flowSeries: [(String, String, (TrendRow) -> Int)] = [
            ("new", "#2e7d32", \.newSubscriptions), ("reactivated", "#00897b", \.reactivated),
            ("trial conversions", "#1565c0", \.trialConversions), ("lapsed", "#f9a825", \.lapsed),
            ("churned", "#ef6c00", \.churned), ("refunded", "#c62828", \.refunded),
        ]
        let flows = SVGBarChart(
            id: "chart-trend-flows",
            title: "Subscriptions moving, per day",
            series: flowSeries.map { SVGBarChart.Series(name: $0.0, color: $0.1) },
            rows: recent.map { date in SVGBarChart.Row(label: date, values: flowSeries.map { total(date, $0.2) }) }
        )
        html += "<section><h2>Subscriptions moving (last \(recent.count) day(s))</h2><figure>\(flows.render())</figure>"
        html += "</section>\n"

        html += "<section class=\"rows\"><h2>MRR movement per currency (last \(recent.count) day(s))</h2>\n"
        var movement: [[String]] = []
        for date in recent {
            for currency in currencies {
                let group = (byDate[date] ?? []).filter { $0.currency == currency }
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
        html += ReportHTML.table(
            columns: ["date", "currency", "MRR", "new", "expansion", "contraction", "churn"],
            rows: movement,
            numericFrom: 2
        )
        html += "</section>\n"

        html += "<section class=\"rows\"><h2>Latest day per app, product and currency</h2><div class=\"scroll\">\n"
        html += ReportHTML.table(
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
        html += "</div></section>\n"
        html += """
            <footer>Written by renewal-reconciler from trend_snapshots. Every figure, its source and what a rebuild \
            can recompute: docs/reports.md, "Trends across nights". trends.csv holds every row of these days.</footer>
            </body>
            </html>

            """
        return html
    }
}
