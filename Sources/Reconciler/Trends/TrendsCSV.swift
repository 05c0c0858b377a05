/// trends.csv: one row per day, app, product and currency (docs/reports.md, "Trends across nights"). Amounts are plain
/// numbers in the currency's minor unit (JPY none), empty on the unpriced row; text cells are neutralised
/// against formulas by `CSVWriter`.
enum TrendsCSV {
    static let columns = [
        "date", "bundle_id", "product_id", "currency", "active", "grace_period", "billing_retry", "in_trial",
        "in_intro_offer", "new", "renewed", "lapsed", "churned", "refunded", "reactivated", "trial_conversions",
        "mrr_subscriptions", "mrr", "mrr_new", "mrr_expansion", "mrr_contraction", "mrr_churn", "mrr_source",
        "run_id", "recorded_by",
    ]

    static let numericColumns: Set<String> = [
        "date", "active", "grace_period", "billing_retry", "in_trial", "in_intro_offer", "new", "renewed", "lapsed",
        "churned", "refunded", "reactivated", "trial_conversions", "mrr_subscriptions", "mrr", "mrr_new",
        "mrr_expansion", "mrr_contraction", "mrr_churn", "run_id",
    ]

    static func amount(_ milliunits: Int64?, _ currency: String) -> String {
        guard let milliunits, !currency.isEmpty else { return "" }
        return CurrencyFormat.format(milliunits: milliunits, currency: currency)
    }

    static func row(_ row: TrendRow) -> [String] {
        [
            row.date, row.bundleId, row.productId, row.currency, "\(row.active)", "\(row.gracePeriod)",
            "\(row.billingRetry)", "\(row.inTrial)", "\(row.inIntroOffer)", "\(row.newSubscriptions)", "\(row.renewed)",
            "\(row.lapsed)", "\(row.churned)", "\(row.refunded)", "\(row.reactivated)", "\(row.trialConversions)",
            "\(row.mrrSubscriptions)", amount(row.mrr, row.currency), amount(row.mrrNew, row.currency),
            amount(row.mrrExpansion, row.currency), amount(row.mrrContraction, row.currency),
            amount(row.mrrChurn, row.currency), row.mrrSource, row.runId.map(String.init) ?? "", row.recordedBy,
        ]
    }

    static func document(_ rows: [TrendRow]) throws(CSVWriterError) -> String {
        let writer = CSVWriter(columns: columns.map { CSVColumn($0, numericColumns.contains($0) ? .numeric : .text) })
        return try writer.document(rows: rows.map(row))
    }
}
