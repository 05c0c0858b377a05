/// Renders report.html: one self-contained page for finance (inline CSS and SVG, no scripts, no
/// external assets), printable, with a banner on dry runs and unfinished runs. Every value is escaped.
public enum ReportHTML {
    /// The `id`s of the charts (scripts/check-reports checks they are present).
    public static let chartIds = [
        "chart-outcomes-by-product", "chart-renewals-lapses-refunds", "chart-retry-funnel", "chart-trial-conversions",
        "chart-churn-by-reason",
    ]

    /// Rows shown per table on the page; the CSV files always hold every row.
    public static let tableRowLimit = 200

    /// The chart colour of each outcome (and of pending items), keyed by the stored string.
    static let outcomeColors: [String: String] = Dictionary(
        uniqueKeysWithValues: ItemOutcome.allCases.map { ($0.rawValue, color(of: $0)) } + [
            (ReportOutcome.pending, "#cfd8dc")
        ]
    )

    static func color(of outcome: ItemOutcome) -> String {
        switch outcome {
        case .renewed: return "#2e7d32"
        case .unchanged: return "#90a4ae"
        case .lapsed: return "#ef6c00"
        case .recovered: return "#00897b"
        case .revoked: return "#c62828"
        case .changed: return "#1565c0"
        case .rejected: return "#6a1b9a"
        case .unresolved: return "#f9a825"
        case .conflict: return "#6d4c41"
        case .noApp: return "#546e7a"
        }
    }

    /// The whole page from in-memory `data`.
    public static func render(data: ReportData, summary: RunSummary) -> String {
        render(
            summary: summary,
            changes: ReportRowSample(rows: ReportTables.changeRows(data)),
            backwards: ReportRowSample(rows: ReportTables.backwardsRows(data)),
            errors: ReportRowSample(rows: ReportTables.errorRows(data)),
            transactions: ReportRowSample(rows: ReportTables.transactionRows(data))
        )
    }

    /// The whole page from the summary and the first rows of each table (at least `tableRowLimit`
    /// of them, or all when fewer) with each table's total row count.
    public static func render(
        summary: RunSummary,
        changes: ReportRowSample,
        backwards: ReportRowSample,
        errors: ReportRowSample,
        transactions: ReportRowSample
    ) -> String {
        var html = documentStart(
            title: "Subscription reconciliation, run \(summary.runId) (\(summary.mode), \(summary.asOf.prefix(10)))"
        )
        html += header(summary)
        html += headline(summary)
        html += outcomesSection(summary)
        html += renewalsSection(summary)
        html += funnelSection(summary)
        html += conversionsSection(summary)
        html += churnAndOffersSection(summary.churnAndOffers)
        html += moneySection(summary.money, period: summary.period)
        html += notificationsSection(summary.notifications ?? ReportNotifications())
        html += appleSection(summary.apple)
        html += backwardsSection(backwards)
        html += rowsSection(
            title: "Changed subscriptions",
            file: "changes.csv",
            columns: ReportTables.changeColumns,
            sample: changes,
            id: "changes"
        )
        html += rowsSection(
            title: "Errors (unresolved, rejected, conflict)",
            file: "errors.csv",
            columns: ReportTables.errorColumns,
            sample: errors,
            id: "errors"
        )
        html += rowsSection(
            title: "Transactions first seen in this run",
            file: "transactions.csv",
            columns: ReportTables.transactionColumns,
            sample: transactions,
            id: "transactions"
        )
        html += """
            <footer>Built from the database alone (tables reconciliation_runs, reconciliation_items, \
            subscription_transactions, dry_run_transactions, products, app_store_notifications); regenerate with \
            <code>renewal-reconciler report \(summary.runId)</code>. Machine-readable: summary.json \
            (schema_version \(summary.schemaVersion)), changes.csv, transactions.csv, errors.csv, money.csv, \
            money-storefronts.csv.</footer>
            </body>
            </html>

            """
        return html
    }

    /// A page's start, up to and including `<body>`: its `title` (escaped here) and the reports' stylesheet.
    static func documentStart(title: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(e(title))</title>
        <style>\(css)</style>
        </head>
        <body>

        """
    }

    // MARK: Sections

    static func header(_ s: RunSummary) -> String {
        var out = "<header><h1>Subscription reconciliation</h1>\n<p class=\"meta\">Run <b>\(s.runId)</b> · mode "
        out += "<b>\(e(s.mode))</b> · as of <b>\(e(s.asOf))</b> · started \(e(s.startedAt))"
        out += " · finished \(e(s.finishedAt ?? "not finished"))"
        if let duration = s.durationSeconds { out += " (\(e(formatSeconds(duration))))" }
        out += " · status <b>\(e(s.status))</b> · exit \(e(s.exitStatus))</p></header>\n"
        if s.dryRun {
            out += "<div class=\"banner dry-run\" id=\"dry-run-banner\">DRY RUN: nothing was written to subscriptions "
            out += "or the ledger. These are the changes the run would have made.</div>\n"
        }
        if let pruned = s.itemsPrunedAt {
            out += "<div class=\"banner incomplete\" id=\"items-pruned-banner\">This run's items were pruned on "
            out += "<b>\(e(pruned))</b> (<code>--item-retention-days</code>): only each subscription's newest decided "
            out += "item is left, so the item counts below are incomplete. The report written the night it ran is "
            out += "complete.</div>\n"
        }
        if s.status != RunStatus.completed.rawValue {
            out += "<div class=\"banner incomplete\">This run is <b>\(e(s.status))</b>: "
            out +=
                "\(s.counts.pending) of \(s.counts.selected) items were not finished; the numbers are incomplete.</div>\n"
        }
        return out
    }

    static func headline(_ s: RunSummary) -> String {
        var cards: [(String, String)] = [
            ("Due", "\(s.counts.due)"), ("Verified", "\(s.counts.verified)"),
            ("Renewed", "\(s.byOutcome["renewed"] ?? 0)"), ("Lapsed", "\(s.byOutcome["lapsed"] ?? 0)"),
            ("Refunds seen", "\(s.transactions.refundsSeen)"), ("Changed", "\(s.counts.changed)"),
            ("Unresolved", "\(s.counts.unresolved)"), ("Errors", "\(s.counts.errors)"),
            ("Expiry moved back", "\(s.counts.expiryMovedBackwards)"),
        ]
        if let notDue = s.counts.notDueRejected {
            let next = s.counts.notDueRejectedNextCheck.map { ", next check on \(String($0.prefix(10)))" } ?? ""
            cards.append(("Not due (rejected\(next))", "\(notDue)"))
        }
        if let sweep = s.selection?.sweep {
            cards.append(
                ("Sweep (\(sweep.changed) changed)", "\(sweep.selected) of \(sweep.eligible)")
            )
        }
        if !s.money.catalog.isEmpty {
            let nets = s.money.catalog.codes.compactMap { s.money.catalog.currencies[$0]?.totals }
            cards.append(("Net (catalog prices)", nets.map { "\($0.net) \($0.currency)" }.joined(separator: "<br>")))
        } else if s.money.byCurrency.isEmpty {
            // Say n/a only when there is no money at all.
            cards.append(("Net", "n/a"))
        }
        if !s.money.byCurrency.isEmpty {
            let nets = s.money.byCurrency.codes.compactMap { s.money.byCurrency.currencies[$0]?.totals }
            cards.append(("Net (ledger prices)", nets.map { "\($0.net) \($0.currency)" }.joined(separator: "<br>")))
        }
        var out = "<section class=\"headline\">\n"
        for (label, value) in cards {
            // Values are numbers/amounts built here; the currency code is validated by the schema (^[A-Z]{3}$).
            let lines = value.split(separator: "<br>").map { e(String($0)) }
            // Several amounts (one per currency) in a smaller type, so the card row keeps its height.
            let style = lines.count > 1 ? "num list" : "num"
            out +=
                "<div class=\"card\"><div class=\"\(style)\">\(lines.joined(separator: "<br>"))</div>"
                + "<div class=\"lbl\">\(e(label))</div></div>\n"
        }
        return out + "</section>\n"
    }

    static func outcomesSection(_ s: RunSummary) -> String {
        let outcomes = outcomeColumns(s)
        let chart = SVGBarChart(
            id: chartIds[0],
            title: "Outcomes by product",
            series: outcomes.map { .init(name: $0, color: outcomeColors[$0] ?? "#78909c") },
            rows: s.byProduct.map { group in .init(label: group.id, values: outcomes.map { group.byOutcome[$0] ?? 0 }) }
        )
        var rows = s.byProduct.map { group in
            [group.id] + outcomes.map { "\(group.byOutcome[$0] ?? 0)" } + ["\(group.selected)"]
        }
        rows.append(["All products"] + outcomes.map { "\(s.byOutcome[$0] ?? 0)" } + ["\(s.counts.selected)"])
        var out = section("Outcomes by product", chart: chart.render())
        out += table(columns: ["product"] + outcomes + ["total"], rows: rows, numericFrom: 1, lastRowTotal: true)
        if s.bySubscriptionGroup.count > 1 || s.bySubscriptionGroup.first?.id != ReportOutcome.unknown {
            out += "<h3>By subscription group</h3>\n"
            out += table(
                columns: ["subscription group"] + outcomes + ["total"],
                rows: s.bySubscriptionGroup.map { group in
                    [group.id] + outcomes.map { "\(group.byOutcome[$0] ?? 0)" } + ["\(group.selected)"]
                },
                numericFrom: 1
            )
        }
        // Several apps (or rows of an app no one configured): each app's items and requests.
        if let apps = s.byApp, apps.count > 1 || (s.byOutcome[ItemOutcome.noApp.rawValue] ?? 0) > 0 {
            out += "<h3 id=\"apps\">By app</h3>\n"
            out +=
                "<p class=\"note\">Each app is asked with its own credentials and within its own Apple rate limit; "
                + "no_app: rows whose bundle id no configured app owns (Apple not asked, rows untouched).</p>\n"
            out += table(
                columns: ["app"] + outcomes + ["total", "requests"],
                rows: apps.map { app in
                    [app.id] + outcomes.map { "\(app.byOutcome[$0] ?? 0)" } + ["\(app.selected)", "\(app.requests)"]
                },
                numericFrom: 1
            )
        }
        if let selection = s.selection, !selection.byDueReason.isEmpty {
            out += "<h3 id=\"due-reasons\">Why the items were selected</h3>\n"
            if let sweep = selection.sweep {
                out +=
                    "<p class=\"note\">The sweep re-verified \(sweep.selected) of the \(sweep.eligible) verified, "
                    + "non-revoked subscriptions outside the due window (quota \(sweep.quota) a night), least "
                    + "recently verified first; \(sweep.changed) of them changed: refunds and auto-renew changes the "
                    + "window alone would have found only at expiry.</p>\n"
            }
            out += table(
                columns: ["due reason"] + outcomes + ["total"],
                rows: selection.byDueReason.map { group in
                    [group.id] + outcomes.map { "\(group.byOutcome[$0] ?? 0)" } + ["\(group.selected)"]
                },
                numericFrom: 1
            )
        }
        let states = ReportOutcome.states + s.byNewState.keys.filter { !ReportOutcome.states.contains($0) }.sorted()
        out += "<h3>Subscriptions by new state (finished items)</h3>\n"
        out += table(columns: states, rows: [states.map { "\(s.byNewState[$0] ?? 0)" }], numericFrom: 0)
        return out + "</section>\n"
    }

    static func renewalsSection(_ s: RunSummary) -> String {
        let bars: [(String, Int)] = [
            ("Subscriptions renewed", s.byOutcome["renewed"] ?? 0),
            ("Renewal transactions", s.transactions.firstSeenByKind["renewal"] ?? 0),
            ("Recovered", s.byOutcome["recovered"] ?? 0),
            ("Lapsed", s.byOutcome["lapsed"] ?? 0),
            ("Revoked", s.byOutcome["revoked"] ?? 0),
            ("Refunds seen", s.transactions.refundsSeen),
            ("Family sharing revoked", s.transactions.familyRevocationsSeen ?? 0),
        ]
        let chart = BarsChart(id: chartIds[1], title: "Renewals, lapses and refunds", color: "#1565c0")
        return barsSection("Renewals, lapses and refunds", chart, bars: bars) + "</section>\n"
    }

    static func funnelSection(_ s: RunSummary) -> String {
        let f = s.retryFunnel
        let bars: [(String, Int)] = [
            ("In retry or grace before", f.inRetryOrGraceBefore),
            ("→ recovered (active)", f.recovered),
            ("→ still in grace period", f.stillInGracePeriod),
            ("→ still in billing retry", f.stillInBillingRetry),
            ("→ expired", f.expired),
            ("→ revoked", f.revoked),
            ("Entered grace period", f.enteredGracePeriod),
            ("Entered billing retry", f.enteredBillingRetry),
        ]
        let chart = BarsChart(id: chartIds[2], title: "Billing retry and grace period funnel", color: "#ef6c00")
        let note =
            "Grace period keeps the entitlement while Apple retries billing; billing retry does not. \"Before\" "
            + "counts subscriptions that were in either state when the run started."
        let columns = ["stage", "subscriptions"]
        return barsSection("Billing retry and grace period", chart, bars: bars, note: note, columns: columns)
            + "</section>\n"
    }

    /// The id, title and colour of a one-series bar chart (`barsSection` draws its bars).
    struct BarsChart {
        var id: String
        var title: String
        var color: String
    }

    /// A section of `bars` drawn as `chart`, `note` under it when there is one, and the bars again as a table of two
    /// `columns` (label, count); left open for what follows.
    static func barsSection(
        _ heading: String,
        _ chart: BarsChart,
        bars: [(String, Int)],
        note: String? = nil,
        columns: [String] = ["measure", "count"]
    ) -> String {
        let svg = SVGBarChart(id: chart.id, title: chart.title, color: chart.color, bars: bars).render()
        return section(heading, chart: svg) + (note.map { "<p class=\"note\">\($0)</p>\n" } ?? "")
            + table(columns: columns, rows: bars.map { [$0.0, "\($0.1)"] }, numericFrom: 1)
    }

    static func conversionsSection(_ s: RunSummary) -> String {
        let t = s.transactions
        let bars: [(String, Int)] = [
            ("Trials started", t.trialsStarted), ("Trials converted to paid", t.trialConversions),
            ("Trials lapsed", t.trialsLapsed), ("Intro offers started", t.introOffersStarted),
            ("Intro offers converted", t.introOfferConversions), ("Intro offers lapsed", t.introOffersLapsed),
        ]
        let chart = BarsChart(id: chartIds[3], title: "Trial and intro offer conversions", color: "#00897b")
        let note =
            "A conversion is a paid, full-price renewal first seen in this run whose previous transaction was a free "
            + "trial (or an introductory offer)."
        var out = barsSection("Trial and introductory offer conversions", chart, bars: bars, note: note)
        let kinds = ReportOutcome.kinds + t.firstSeenByKind.keys.filter { !ReportOutcome.kinds.contains($0) }.sorted()
        out += "<h3>Ledger transactions first seen, by kind</h3>\n"
        out += table(columns: kinds, rows: [kinds.map { "\(t.firstSeenByKind[$0] ?? 0)" }], numericFrom: 0)
        return out + "</section>\n"
    }

    static func moneySection(_ m: MoneySummary, period: ReportPeriod?) -> String {
        var out = "<section id=\"money\"><h2>Money</h2>\n"
        out += "<p id=\"money-period\">" + periodText(period) + "</p>\n"
        out += ledgerMoney(m.byCurrency, commission: m.proceedsEstimate, calibration: m.proceedsCalibration)
        if let converted = m.converted { out += convertedMoney(converted) }
        out += historyFound(m.historyFound)
        out += catalogMoney(m)
        return out + "</section>\n"
    }

    /// Money of the verifyReceipt transactions priced with the products catalog, per currency then product, and
    /// what the catalog could not price (docs/reports.md, "Money from the catalog").
    static func catalogMoney(_ m: MoneySummary) -> String {
        let c = m.catalog
        var out = "<h3 id=\"money-catalog\">Money per currency (source: \(e(MoneySummary.catalogSource)))</h3>\n"
        out += "<p class=\"note\">Transactions read through verifyReceipt, which carries no price: gross = paid "
        out += "purchases dated in the period at the catalog price in the subscription's currency (its intro_price "
        out += "during an introductory offer); refunded = refunds dated in the period, valued in full (verifyReceipt "
        out += "shows a refund, never a prorated share); the catalog has today's prices, so a refund of a purchase "
        out += "made before a price change is valued at today's price.</p>\n"
        if c.isEmpty {
            out += "<p>No verifyReceipt transaction priced with the catalog in this period.</p>\n"
        } else {
            out += currencyTable(c, id: "catalog-by-currency") + productTable(c) + "</div>\n"
        }
        if !m.catalogUnpriced.isEmpty {
            out += "<p class=\"warn\" id=\"missing-prices\">Not priced (counted, never valued):</p>\n"
            out += table(
                columns: ["product", "why", "purchases", "refunds"],
                rows: m.catalogUnpriced.map { [$0.productId, $0.explanation, "\($0.purchases)", "\($0.refunds)"] },
                numericFrom: 2
            )
        }
        return out
    }

    /// `m`'s totals, a row per currency, in a scrolling block of `id` (left open for what follows).
    static func currencyTable(_ m: MoneyByCurrency, id: String) -> String {
        "<div class=\"scroll\" id=\"\(id)\">"
            + table(
                columns: ledgerColumns(first: "currency"),
                rows: m.codes.compactMap { m.currencies[$0]?.totals }.map { [$0.currency] + ledgerCells($0) },
                numericFrom: 1
            )
    }

    /// After `currencyTable`: `m` per product within each currency, in a scrolling block left open.
    static func productTable(_ m: MoneyByCurrency) -> String {
        "</div><h4>Per product, within each currency</h4>\n<div class=\"scroll\">"
            + table(
                columns: ["currency", "product"] + ledgerColumns(first: nil),
                rows: m.codes.flatMap { code in
                    (m.currencies[code]?.products ?? []).map { [code, $0.productId ?? ""] + ledgerCells($0) }
                },
                numericFrom: 2
            )
    }

    /// Money per currency from the prices Apple signed into the ledger: one row per currency (never summed
    /// across currencies), then per product within each currency.
    static func ledgerMoney(
        _ m: MoneyByCurrency,
        commission: CommissionPolicy,
        calibration: ProceedsCalibration = .none
    ) -> String {
        var out = "<h3 id=\"money-per-currency\">Money per currency (source: \(e(LedgerCurrencyMoney.source)))</h3>\n"
        out += "<p class=\"note\">Gross = paid transactions purchased in the period at the price Apple signed; "
        out += "refunded = full refunds at that price plus prorated refunds (price × refunded percentage, rounded to "
        out += "the currency's minor unit) dated in the period; net = gross − refunded. "
        out += "Each currency stands alone: amounts in different currencies are never added up.</p>\n"
        out += "<p class=\"note\" id=\"proceeds-estimate\">Est. proceeds (\(e(commission.label))): each price less "
        out += "Apple's commission, the refunds' proceeds reversed at the refunded transaction's rate. Taxes, which "
        out += "Apple withholds in many storefronts, are not estimated: App Store Connect's financial report is the "
        out += "source of record for proceeds.</p>\n"
        out += calibrationNote(m, calibration)
        if m.isEmpty {
            return out + "<p>No transaction with a signed price in this run.</p>\n"
        }
        out += currencyTable(m, id: "money-by-currency") + productTable(m)
        out += "</div><h4 id=\"money-by-storefront\">Per storefront, within each currency</h4>\n"
        out += "<p class=\"note\">Apple's storefront of each transaction (App Store Server API; verifyReceipt "
        out += "carries none, so catalog estimates have no storefront).</p>\n<div class=\"scroll\">"
        out += table(
            columns: ["currency", "storefront"] + ledgerColumns(first: nil),
            rows: m.codes.flatMap { code in
                (m.currencies[code]?.storefronts ?? []).map { [code, $0.storefront] + ledgerCells($0.totals) }
            },
            numericFrom: 2
        )
        return out + "</div>\n"
    }

    /// How many estimates Apple's measured rates gave, and those rates (docs/reports.md, "Calibrated proceeds");
    /// empty when none did.
    static func calibrationNote(_ m: MoneyByCurrency, _ calibration: ProceedsCalibration) -> String {
        let totals = m.codes.compactMap { m.currencies[$0]?.totals }
        let calibrated = totals.reduce(0) { $0 + $1.calibratedTransactions }
        guard calibrated > 0 else { return "" }
        let paid = totals.reduce(0) { $0 + $1.firstYearTransactions + $1.afterFirstYearTransactions }
        let rates = calibration.rates.sorted { $0.key < $1.key }.map { key, rate in
            let tier = key.afterFirstYear ? "after a year" : "first year"
            return "\(key.country) \(key.currency) \(tier) \(String(format: "%.2f", rate.share * 100))% (\(rate.units))"
        }
        var out = "<p class=\"note\" id=\"proceeds-calibrated\">Calibrated: the proceeds of \(calibrated) of \(paid) "
        out += "paid transactions use Apple's own rate for their storefront, currency and tier (tax and commission "
        out += "together), measured from the Subscriber reports of the \(ProceedsCalibration.windowDays) days to the "
        out += "run's day; the others are the estimate above. Rates (units measured): "
        return out + e(rates.joined(separator: "; ")) + ".</p>\n"
    }

    /// The period's money converted with the user's rates (`--fx-rates`), labelled so, per currency then the
    /// total (docs/reports.md, "Converted totals").
    static func convertedMoney(_ c: ConvertedMoney) -> String {
        let code = e(c.reportingCurrency)
        var out = "<h3 id=\"money-converted\">Converted to \(code) with your exchange rates</h3>\n"
        out += "<p class=\"note\">Converted with the rates of <code>\(e(c.ratesFile))</code> (--fx-rates), not "
        out += "Apple's: each currency's figures times its rate, rounded to the \(code) minor unit, then added. "
        out += "App Store Connect's financial report converts with its own rates. Proceeds are estimates (taxes not "
        out += "estimated).</p>\n"
        if !c.isComplete {
            out += "<p class=\"warn\" id=\"money-converted-incomplete\">Incomplete: no rate for "
            out += c.currenciesWithoutRate.map { "<code>\(e($0))</code>" }.joined(separator: ", ")
            out += "; those currencies are not in the total.</p>\n"
        }
        let columns = [
            "currency", "rate", "gross (\(code))", "refunded (\(code))", "net (\(code))", "est. proceeds (\(code))",
            "est. proceeds refunded (\(code))", "est. net proceeds (\(code))",
        ]
        func cells(_ f: ConvertedMoney.Figures) -> [String] {
            ConvertedMoney.figureKeys.map { c.format(f[keyPath: $0.value]) }
        }
        let rows = c.currencies.map { [$0.currency, $0.rate] + cells($0.figures) } + [["total", ""] + cells(c.totals)]
        return out + "<div class=\"scroll\">" + table(columns: columns, rows: rows, numericFrom: 1) + "</div>\n"
    }

    /// What the period is, in words (docs/reports.md, "The period").
    static func periodText(_ period: ReportPeriod?) -> String {
        guard let period else { return "Period: not recorded for this run (counted by first sight)." }
        let since =
            period.previousRunId.map { "since run \($0), the previous completed run" }
            ?? "the calendar day (UTC) of the as-of: no earlier completed run"
        return "Period: after \(e(period.start)) up to and including \(e(period.end)) (\(since)). Money and "
            + "transaction counts are by purchase or refund date in the period; what this run found dated earlier "
            + "is under “History found”."
    }

    /// Ledger money dated before the period that this run found, apart from the period's.
    static func historyFound(_ m: MoneyByCurrency) -> String {
        var out = "<h3 id=\"money-history-found\">History found (dated before the period)</h3>\n"
        out += "<p class=\"note\">Purchases and refunds dated before the period that this run saw first (a first "
        out += "reconciliation, an answer Apple gave late): they belong to earlier periods and are not this "
        out += "period's revenue.</p>\n"
        if m.isEmpty { return out + "<p>None.</p>\n" }
        return out + currencyTable(m, id: "history-found-by-currency") + "</div>\n"
    }

    static func ledgerColumns(first: String?) -> [String] {
        (first.map { [$0] } ?? []) + [
            "paid", "gross", "full refunds", "refunded (full)", "prorated refunds", "refunded (prorated)",
            "refunded", "net", "est. proceeds", "est. proceeds refunded", "est. net proceeds",
        ]
    }

    static func ledgerCells(_ f: LedgerMoneyFigures) -> [String] {
        [
            "\(f.paidTransactions)", f.gross, "\(f.fullRefunds)", f.refundedFull, "\(f.proratedRefunds)",
            f.refundedProrated, f.refunded, f.net, f.proceeds, f.proceedsRefunded, f.netProceeds,
        ]
    }

    /// App Store Server Notifications read in this run, by type, and the subscriptions they name that the
    /// database does not know (nothing to show for runs that read none).
    static func notificationsSection(_ n: ReportNotifications) -> String {
        var out = "<section id=\"notifications\"><h2>App Store Server Notifications (\(n.total))</h2>\n"
        if n.total == 0 && n.unknownSubscriptions.isEmpty {
            return out + "<p>No notifications were read in this run.</p></section>\n"
        }
        out += table(columns: ["notification type", "notifications"], rows: sortedCounts(n.byType), numericFrom: 1)
        if let notUnderstood = n.notUnderstood, notUnderstood > 0 {
            out += "<p class=\"note\" id=\"not-understood\">\(notUnderstood) of a type this version does not know: "
            out += "verified and stored as Apple sent them (app_store_notifications), no subscription changed. "
            out += "A newer version may act on them.</p>\n"
        }
        out += refundRequestsTable(n.refundRequests ?? [])
        out += "<h3 id=\"unknown-subscriptions\">Unknown subscriptions (\(n.unknownSubscriptions.count))</h3>\n"
        out += "<p class=\"note\">Original transaction ids named by notifications first seen in this run that the "
        out += "subscriptions table did not hold: purchases the app never recorded. summary.json lists them all.</p>\n"
        if n.unknownSubscriptions.isEmpty { return out + "<p>None.</p></section>\n" }
        if n.unknownSubscriptions.count > tableRowLimit {
            out += "<p class=\"note\">Showing the first \(tableRowLimit) of \(n.unknownSubscriptions.count).</p>\n"
        }
        out += table(
            columns: ["original_transaction_id"],
            rows: n.unknownSubscriptions.prefix(tableRowLimit).map { [$0] },
            numericFrom: nil
        )
        return out + "</section>\n"
    }

    /// Refund requests Apple told the app about in this run: each with the 12-hour window to answer and what followed.
    static func refundRequestsTable(_ requests: [ReportRefundRequest]) -> String {
        guard !requests.isEmpty else { return "" }
        let open = requests.filter { $0.outcome == .open }.count
        var out = "<h3 id=\"refund-requests\">Refund requests (\(requests.count), \(open) open)</h3>\n"
        out += "<p class=\"note\">Customers asked Apple for a refund (CONSUMPTION_REQUEST). Apple takes the app's "
        out += "consumption information until \"answer by\", 12 hours after its notification, then decides.</p>\n"
        out += table(
            columns: ["transaction_id", "original_transaction_id", "requested at", "answer by", "outcome"],
            rows: requests.prefix(tableRowLimit).map {
                [
                    $0.transactionId, $0.originalTransactionId ?? "", $0.requestedAt, $0.answerBy,
                    $0.outcome.rawValue,
                ]
            },
            numericFrom: nil
        )
        return out
    }

    static func appleSection(_ a: AppleRequestStats) -> String {
        var out = "<section id=\"apple\"><h2>Apple verifyReceipt requests</h2>\n"
        out += table(
            columns: ["requests", "retries", "elapsed", "achieved rate"],
            rows: [
                ["\(a.requests)", "\(a.retries)", formatSeconds(a.elapsedSeconds), "\(rate(a.achievedRate)) req/s"]
            ],
            numericFrom: 0
        )
        out += "<div class=\"cols\">"
        out += "<div><h3>By HTTP status</h3>\n"
        out +=
            table(columns: ["HTTP status", "responses"], rows: sortedCounts(a.byHTTPStatus), numericFrom: 1) + "</div>"
        out += "<div><h3>By Apple status</h3>\n"
        out +=
            table(columns: ["Apple status", "responses"], rows: sortedCounts(a.byAppleStatus), numericFrom: 1)
            + "</div>"
        out += "<div><h3>Transport errors</h3>\n"
        out += table(columns: ["error", "count"], rows: sortedCounts(a.transportErrors), numericFrom: 1) + "</div>"
        out += "</div>\n</section>\n"
        return out
    }

    /// Subscriptions whose expiry Apple's answer moved earlier than the stored one: support and finance
    /// follow these up (a refund, an upgrade, or a date the app stored wrongly; the reason says which).
    static func backwardsSection(_ sample: ReportRowSample) -> String {
        var out = "<section id=\"expiry-moved-backwards\" class=\"rows\">"
        out += "<h2>Expiry moved backwards (\(sample.total))</h2>\n"
        out += "<p class=\"note\">Apple's answer is the truth: these subscriptions now end earlier than the database "
        out += "said before the run (old → new expiry). changes.csv lists them too, with "
        out += "expiry_moved_backwards = true.</p>\n"
        if sample.total == 0 || sample.rows.isEmpty { return out + "<p>None.</p></section>\n" }
        if sample.total > tableRowLimit {
            out += "<p class=\"note\">Showing the first \(tableRowLimit) of \(sample.total) rows; "
            out += "changes.csv has them all.</p>\n"
        }
        let rows = sample.rows.prefix(tableRowLimit).map { row -> [String] in
            // subscription, user, "old -> new", product change, reason
            [row[0], row[1], "\(row[2]) → \(row[3])", row[4], row[5]]
        }
        out += "<div class=\"scroll\">"
        out += table(
            columns: ["subscription", "user", "expiry (old → new)", "product change", "reason"],
            rows: rows,
            numericFrom: nil,
            small: true
        )
        return out + "</div></section>\n"
    }

    static func rowsSection(
        title: String,
        file: String,
        columns: [String],
        sample: ReportRowSample,
        id: String
    ) -> String {
        let total = sample.total
        var out = "<section id=\"\(id)\" class=\"rows\"><h2>\(e(title)) (\(total))</h2>\n"
        if total == 0 || sample.rows.isEmpty { return out + "<p>None.</p></section>\n" }
        if total > tableRowLimit {
            out +=
                "<p class=\"note\">Showing the first \(tableRowLimit) of \(total) rows; \(e(file)) has them all.</p>\n"
        }
        out += "<div class=\"scroll\">"
        out += table(columns: columns, rows: Array(sample.rows.prefix(tableRowLimit)), numericFrom: nil, small: true)
        return out + "</div></section>\n"
    }

    // MARK: Helpers

    static func section(_ title: String, chart: String) -> String {
        "<section class=\"chart-section\"><h2>\(e(title))</h2>\n<figure>\(chart)</figure>\n"
    }

    /// An HTML table; every cell escaped. Columns from `numericFrom` on are right-aligned.
    static func table(
        columns: [String],
        rows: [[String]],
        numericFrom: Int?,
        lastRowTotal: Bool = false,
        small: Bool = false
    ) -> String {
        var out = "<table\(small ? " class=\"small\"" : "")><thead><tr>"
        for (index, column) in columns.enumerated() {
            out += "<th\(isNumeric(index, numericFrom) ? " class=\"n\"" : "")>\(e(column))</th>"
        }
        out += "</tr></thead><tbody>\n"
        if rows.isEmpty {
            out += "<tr><td colspan=\"\(columns.count)\">none</td></tr>\n"
        }
        for (rowIndex, row) in rows.enumerated() {
            out += lastRowTotal && rowIndex == rows.count - 1 ? "<tr class=\"total\">" : "<tr>"
            for (index, cell) in row.enumerated() {
                out += "<td\(isNumeric(index, numericFrom) ? " class=\"n\"" : "")>\(e(cell))</td>"
            }
            out += "</tr>\n"
        }
        return out + "</tbody></table>\n"
    }

    static func isNumeric(_ index: Int, _ from: Int?) -> Bool { from.map { index >= $0 } ?? false }

    /// Outcomes shown as columns: every known one, then `pending` and unknown ones when present.
    /// Every outcome (a stable layout), except `no_app` when no item had it (only runs that meet a row of an
    /// unconfigured app show that column), then outcomes this build does not know.
    static func outcomeColumns(_ s: RunSummary) -> [String] {
        ReportOutcome.all.filter { $0 != ItemOutcome.noApp.rawValue || (s.byOutcome[$0] ?? 0) > 0 }
            + s.byOutcome.keys.filter { !ReportOutcome.all.contains($0) && (s.byOutcome[$0] ?? 0) > 0 }
            .sorted()
    }

    static func sortedCounts(_ counts: [String: Int]) -> [[String]] {
        counts.sorted { $0.key < $1.key }.map { [$0.key, "\($0.value)"] }
    }

    static func formatSeconds(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "?" }
        let total = Int(seconds.rounded())
        if total < 60 { return "\(total) s" }
        if total < 3600 { return "\(total / 60) min \(total % 60) s" }
        return "\(total / 3600) h \(total % 3600 / 60) min"
    }

    static func rate(_ value: Double) -> String {
        guard value.isFinite else { return "?" }
        return String(Double(Int((value * 100).rounded())) / 100)
    }

    static func e(_ value: String) -> String { HTMLText.escape(value) }

    static let css = """
        :root { --ink: #1f2933; --muted: #5f6b7a; --line: #d9dee5; }
        * { box-sizing: border-box; }
        body { font: 14px/1.45 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
               color: var(--ink); margin: 24px auto; max-width: 1180px; padding: 0 20px; }
        h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; }
        h3 { font-size: 15px; margin: 16px 0 6px; }
        .meta { color: var(--muted); margin: 0 0 12px; }
        .banner { padding: 10px 14px; border-radius: 6px; margin: 10px 0; font-weight: 600; }
        .dry-run { background: #fff3cd; border: 2px solid #e0a800; color: #5c4400; font-size: 16px; }
        .incomplete { background: #fdecea; border: 2px solid #c62828; color: #7f1d1d; }
        .headline { display: grid; grid-template-columns: repeat(auto-fill, minmax(140px, 1fr)); gap: 10px; margin: 14px 0; }
        .card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; background: #f8fafc; }
        .card .num { font-size: 22px; font-weight: 700; } .card .lbl { color: var(--muted); font-size: 12px; }
        .card .num.list { font-size: 13px; line-height: 1.4; white-space: nowrap; font-variant-numeric: tabular-nums; }
        figure { margin: 6px 0 10px; overflow-x: auto; }
        svg.chart { max-width: 100%; height: auto; font-size: 12px; }
        svg .label, svg .legend { fill: var(--ink); } svg .value { fill: var(--muted); } svg .empty { fill: var(--muted); }
        table { border-collapse: collapse; margin: 6px 0 12px; }
        th, td { border-bottom: 1px solid var(--line); padding: 4px 10px; text-align: left; vertical-align: top; }
        th { background: #eef2f6; font-weight: 600; } td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
        tr.total td { font-weight: 700; border-top: 2px solid var(--ink); }
        table.small { font-size: 11px; } table.small td { white-space: nowrap; } table.small td:last-child { white-space: normal; min-width: 220px; }
        .scroll { overflow-x: auto; }
        .note { color: var(--muted); font-size: 12px; max-width: 900px; }
        .warn { background: #fff8e1; border-left: 4px solid #f9a825; padding: 6px 10px; }
        .cols { display: flex; flex-wrap: wrap; gap: 28px; }
        footer { margin-top: 32px; color: var(--muted); font-size: 12px; border-top: 1px solid var(--line); padding-top: 8px; }
        @media print {
          body { margin: 0; max-width: none; font-size: 11px; }
          * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
          section { break-inside: avoid-page; } section.rows { break-inside: auto; }
          tr { break-inside: avoid; } thead { display: table-header-group; }
          .banner { border-width: 3px; } .scroll { overflow: visible; } table.small { font-size: 8px; }
        }
        """
}
