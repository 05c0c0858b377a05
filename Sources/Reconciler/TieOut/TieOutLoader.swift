import AppleReports
import Foundation
import Postgres

/// Reads the tie-out's input from PostgreSQL: the ledger's paid events, the Subscriber report's events, the Financial
/// reports' rows and the Apple ID map, for a window and the horizon around it (docs/tie-out.md, "What is compared").
public struct TieOutLoader {
    /// Days before and after the window read for matching partners: a refund booked in another period is found
    /// within it.
    public static let horizonDays: Int64 = 62

    public let connection: PostgresConnection
    public var commission: CommissionPolicy
    /// Only the ledger of subscriptions of this app, and Apple's rows of the products that ledger names.
    public var bundleId: String?

    public init(connection: PostgresConnection, commission: CommissionPolicy = .standard, bundleId: String? = nil) {
        self.connection = connection
        self.commission = commission
        self.bundleId = bundleId
    }

    /// The input of `from ... to`, and notes on what limits it.
    /// - Throws: `TieOutError` (exit 1) naming the query that failed.
    public func load(from: PacificDay, to: PacificDay) throws(TieOutError) -> (input: TieOutInput, notes: [String]) {
        do {
            return try read(from: from, to: to)
        } catch let error as TieOutError {
            throw error
        } catch {
            throw TieOutError(.failure, "reading the ledger and Apple's reports: \(error)")
        }
    }

    func read(from: PacificDay, to: PacificDay) throws -> (input: TieOutInput, notes: [String]) {
        var notes: [String] = []
        let days = try readDays(from: from, to: to, notes: &notes)
        let months = try readMonths(from: from, to: to, products: days.products, notes: &notes)
        return (
            TieOutInput(
                from: from,
                to: to,
                ledger: days.ledger,
                apple: days.apple,
                daysWithoutReport: days.uncovered,
                reversals: days.reversals,
                fiscalMonths: months.months,
                partnerShares: months.shares,
                settlements: months.settlements,
                settledLaterKnown: months.settledLaterKnown,
                commission: commission
            ),
            notes
        )
    }

    /// The daily view's input, `horizonDays` either side of the days compared: the ledger's events, Apple's
    /// Subscriber report events (of `bundleId`'s products when set), the days without a report, the reversals.
    private func readDays(
        from: PacificDay,
        to: PacificDay,
        notes: inout [String]
    ) throws -> (
        ledger: [TieOutLedgerEvent], apple: [TieOutAppleEvent], uncovered: Set<PacificDay>,
        reversals: [TieOutReversal], products: Set<String>?
    ) {
        let first = PacificDay(days: from.days - Self.horizonDays)
        let last = PacificDay(days: to.days + Self.horizonDays)
        let (ledger, unpriced) = try ledgerEvents(from: first.start, to: last.next.start)
        if unpriced > 0 {
            notes.append(
                "\(unpriced) ledger transaction(s) of these days have no signed price (verifyReceipt rows): not compared"
            )
        }
        let products = bundleId == nil ? nil : Set(ledger.map(\.productId))
        let map = try appleIds()
        for (appleId, named) in map.conflicts.sorted(by: { $0.key < $1.key }) {
            notes.append(
                "Apple ID \(appleId) is named for several products (\(named.joined(separator: ", "))): \(named[0]) is used"
            )
        }
        var apple = try appleEvents(from: first, to: last, map: map)
        if let products { apple = apple.filter { $0.productId.map(products.contains) ?? true } }
        let unmapped = Set(
            apple.filter { $0.productId == nil && $0.day >= from && $0.day <= to }.map(\.subscriptionAppleId)
        )
        if !unmapped.isEmpty {
            notes.append(
                "Subscription Apple ID(s) \(unmapped.sorted().joined(separator: ", ")) map to no product: compared as "
                    + "apple_id:ID and unexplained (add apple_id to the catalog)"
            )
        }
        let uncovered = try daysWithoutSubscriberReport(from: first, to: last)
        let missing = uncovered.filter { $0 >= from && $0 <= to }
        let edges = [PacificDay(days: from.days - 1), to.next].filter(uncovered.contains)
        if !edges.isEmpty {
            notes.append(
                "no Subscriber report imported for \(Self.list(edges.map(\.description))) next to the days compared: "
                    + "a purchase Apple books across that edge reads as unexplained, not timing"
            )
        }
        if !missing.isEmpty {
            let left = ledger.filter { Set(missing).contains($0.day) }.count
            notes.append(
                "no Subscriber report imported for \(missing.count) day(s): \(Self.list(missing.map(\.description))); "
                    + "the daily view leaves out their \(left) ledger event(s)"
            )
        }
        let reversals = try reversals(since: first.start)
        return (ledger, apple, Set(uncovered), reversals, products)
    }

    /// The monthly view's input: the fiscal months wholly inside the days compared that have a Financial report,
    /// their partner shares and settlements (of `products` when set), and which months' later settlements are known.
    private func readMonths(
        from: PacificDay,
        to: PacificDay,
        products: Set<String>?,
        notes: inout [String]
    ) throws
        -> (
            months: [AppleFiscalMonth], shares: [TieOutPartnerShare], settlements: [TieOutSettlement],
            settledLaterKnown: Set<AppleFiscalMonth>
        )
    {
        var months: [AppleFiscalMonth] = []
        var month = AppleFiscalMonth(containing: from)
        while month.start <= to {
            if month.start >= from && month.end <= to { months.append(month) }
            month = month.next
        }
        let imported = try financialMonths()
        for month in months where !imported.contains(month.name) {
            notes.append("no Financial report imported for fiscal month \(month.name): its monthly view is left out")
        }
        months = months.filter { imported.contains($0.name) }
        var shares = try partnerShares(months)
        if let products { shares = shares.filter { products.contains($0.productId) } }
        let detailed = try detailedMonths()
        var settlements = try settlements(months)
        if let products { settlements = settlements.filter { products.contains($0.productId) } }
        for month in months where !detailed.contains(month.name) {
            notes.append(
                "no detailed Financial report imported for fiscal month \(month.name): what it settled of earlier "
                    + "months' sales is not known (read as unexplained)"
            )
        }
        return (months, shares, settlements, Set(months.filter { detailed.contains($0.next.name) }))
    }

    static func list(_ items: [String]) -> String {
        items.count <= 10 ? items.joined(separator: ", ") : items.prefix(10).joined(separator: ", ") + ", ..."
    }

    /// A subscription's transaction: it has an expiry. A one-time purchase (kind `one_time`, and `refund` once
    /// refunded) has none; the Subscriber report does not carry them.
    static let subscriptionSQL = "t.kind <> 'one_time' AND t.expires_date IS NOT NULL"

    /// Paid, non-Sandbox subscription transactions with a signed price: a sale on the purchase instant, a refund on
    /// the refund instant (a family-sharing revocation is no refund), each with its estimated proceeds.
    func ledgerEvents(from: Date, to: Date) throws -> ([TieOutLedgerEvent], Int) {
        let app =
            bundleId == nil
            ? ""
            : """
               AND EXISTS (SELECT 1 FROM subscriptions s
                            WHERE s.original_transaction_id = t.original_transaction_id AND s.bundle_id = $3)
            """
        // A transaction replaced by an upgrade carries the upgrade's time as its cancellation date: no refund.
        let refundDate = "CASE WHEN NOT t.is_upgraded THEN COALESCE(t.revocation_date, t.cancellation_date) END"
        let inRange = "(t.purchase_date >= $1 AND t.purchase_date < $2 OR \(refundDate) >= $1 AND \(refundDate) < $2)"
        var params: [(any PostgresEncodable)?] = [from, to]
        if let bundleId { params.append(bundleId) }
        let rows = try connection.query(
            """
            SELECT t.transaction_id, t.product_id, t.purchase_date, t.price_milliunits, t.currency, t.storefront,
                   COALESCE(t.ownership_type = 'FAMILY_SHARED', false) AS family_shared,
                   \(refundDate) AS refund_date, t.revocation_type, t.revocation_percentage,
                   (SELECT min(p.purchase_date) FROM subscription_transactions p
                     WHERE p.original_transaction_id = t.original_transaction_id
                       AND \(ReportLoader.paidServiceSQL("p", serverAPI: true))) AS first_paid_date
              FROM subscription_transactions t
             WHERE \(Self.subscriptionSQL) AND NOT t.is_trial AND t.price_milliunits > 0 AND t.currency IS NOT NULL
               AND t.purchase_date IS NOT NULL AND COALESCE(t.environment, '') <> 'Sandbox' AND \(inRange)\(app)
             ORDER BY t.transaction_id
            """,
            params
        )
        let unpriced =
            try connection.queryFirst(
                """
                SELECT count(*) AS n FROM subscription_transactions t
                 WHERE \(Self.subscriptionSQL) AND NOT t.is_trial AND t.price_milliunits IS NULL
                   AND COALESCE(t.environment, '') <> 'Sandbox' AND \(inRange)\(app)
                """,
                params
            )?
            .decode("n", as: Int.self) ?? 0
        var events: [TieOutLedgerEvent] = []
        for row in rows {
            let purchase: Date = try row.decode("purchase_date")
            let price: Int64 = try row.decode("price_milliunits")
            let currency: String = try row.decode("currency")
            let firstPaid: Date? = try row.decode("first_paid_date")
            let rate =
                CommissionPolicy.isAfterFirstYear(purchase: purchase, firstPaid: firstPaid)
                ? commission.afterFirstYearRate : commission.firstYearRate
            let sale = TieOutLedgerEvent(
                transactionId: try row.decode("transaction_id"),
                kind: .sale,
                instant: purchase,
                productId: try row.decode("product_id"),
                country: StorefrontCountry.country(ofStorefront: try row.decode("storefront")),
                currency: currency,
                amount: price,
                proceeds: CommissionPolicy.proceeds(of: price, rate: rate, currency: currency),
                commissionRate: rate,
                familyShared: try row.decode("family_shared")
            )
            if purchase >= from && purchase < to { events.append(sale) }
            let revocation: String? = try row.decode("revocation_type")
            guard let refunded: Date = try row.decode("refund_date"), refunded >= from, refunded < to,
                revocation != "FAMILY_REVOKE"
            else { continue }
            let percentage: Int64? = try row.decode("revocation_percentage")
            let amount =
                revocation == "REFUND_PRORATED" && percentage != nil
                ? CurrencyFormat.prorated(priceMilliunits: price, percentage: percentage!, currency: currency) : price
            var refund = sale
            refund.kind = .refund
            refund.instant = refunded
            refund.amount = -amount
            refund.proceeds = -CommissionPolicy.proceeds(of: amount, rate: rate, currency: currency)
            events.append(refund)
        }
        return (events, unpriced)
    }

    /// The ledger's paid subscription transactions whose refund Apple reversed (a `REFUND_REVERSED` notification
    /// names them) since `since`, however late: a refund of the window may be reversed months after it.
    func reversals(since: Date) throws -> [TieOutReversal] {
        let app =
            bundleId == nil
            ? ""
            : " AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.original_transaction_id = t.original_transaction_id "
                + "AND s.bundle_id = $2)"
        var params: [(any PostgresEncodable)?] = [since]
        if let bundleId { params.append(bundleId) }
        return try connection.query(
            """
            SELECT t.transaction_id, t.product_id, t.purchase_date, t.price_milliunits, t.currency, t.storefront,
                   min(n.signed_date) AS reversed_at
              FROM app_store_notifications n JOIN subscription_transactions t ON t.transaction_id = n.transaction_id
             WHERE n.notification_type = 'REFUND_REVERSED' AND n.signed_date >= $1
               AND \(Self.subscriptionSQL) AND t.price_milliunits > 0 AND t.currency IS NOT NULL
               AND t.purchase_date IS NOT NULL AND COALESCE(t.environment, '') <> 'Sandbox'\(app)
             GROUP BY t.transaction_id, t.product_id, t.purchase_date, t.price_milliunits, t.currency, t.storefront
             ORDER BY t.transaction_id
            """,
            params
        )
        .map { row in
            TieOutReversal(
                transactionId: try row.decode("transaction_id"),
                productId: try row.decode("product_id"),
                country: StorefrontCountry.country(ofStorefront: try row.decode("storefront")),
                currency: try row.decode("currency"),
                purchaseDay: PacificDay(of: try row.decode("purchase_date", as: Date.self)),
                price: try row.decode("price_milliunits"),
                reversedAt: try row.decode("reversed_at")
            )
        }
    }

    /// The catalog's Apple IDs, then the Financial reports' (`ProductAppleIds`).
    func appleIds() throws -> ProductAppleIds {
        let catalog = try connection.query(
            "SELECT DISTINCT apple_id, product_id FROM products WHERE apple_id IS NOT NULL"
        )
        .map {
            (
                appleId: try $0.decode("apple_id", as: String.self),
                productId: try $0.decode("product_id", as: String.self)
            )
        }
        let financial = try connection.query(
            """
            SELECT DISTINCT apple_identifier AS apple_id, vendor_identifier AS product_id FROM apple_financial_rows
            UNION SELECT DISTINCT apple_identifier, sku FROM apple_finance_detail_rows
            """
        )
        .map {
            (
                appleId: try $0.decode("apple_id", as: String.self),
                productId: try $0.decode("product_id", as: String.self)
            )
        }
        return ProductAppleIds(catalog: catalog, financial: financial)
    }

    /// The Subscriber report's paid events (customer price not zero) of `from ... to`, a row of n units as n events.
    func appleEvents(from: PacificDay, to: PacificDay, map: ProductAppleIds) throws -> [TieOutAppleEvent] {
        let rows = try connection.query(
            """
            SELECT f.file_name, e.line, e.event_date::text AS day, e.subscription_apple_id, e.customer_price_milliunits,
                   e.customer_currency, e.developer_proceeds_milliunits, e.proceeds_currency,
                   COALESCE(lower(e.proceeds_reason) LIKE '%after one year%', false) AS after_one_year,
                   e.country, e.subscriber_id, e.refund, e.purchase_date::text AS purchase_day, e.units
              FROM apple_subscriber_events e JOIN apple_report_files f ON f.id = e.file_id
             WHERE e.event_date BETWEEN $1::date AND $2::date AND e.customer_price_milliunits <> 0
             ORDER BY e.event_date, f.file_name, e.line
            """,
            [from.description, to.description]
        )
        var events: [TieOutAppleEvent] = []
        for row in rows {
            let fileName: String = try row.decode("file_name")
            let line: Int = try row.decode("line")
            let dayText: String = try row.decode("day")
            guard let day = PacificDay(dayText) else {
                throw TieOutError(.failure, "\(fileName): line \(line): Event Date \(dayText) is not a day")
            }
            let appleId: String = try row.decode("subscription_apple_id")
            let refund: Bool = try row.decode("refund")
            let price: Int64 = try row.decode("customer_price_milliunits")
            let proceeds: Int64 = try row.decode("developer_proceeds_milliunits")
            let units: Int = try row.decode("units")
            let event = TieOutAppleEvent(
                fileName: fileName,
                line: line,
                day: day,
                subscriptionAppleId: appleId,
                productId: map.productId(of: appleId),
                country: try row.decode("country"),
                currency: try row.decode("customer_currency"),
                // A refund is negative whatever sign the row gives its amounts (docs/apple-reports.md).
                amount: refund ? -abs(price) : abs(price),
                proceeds: refund ? -abs(proceeds) : abs(proceeds),
                proceedsCurrency: try row.decode("proceeds_currency"),
                afterOneYear: try row.decode("after_one_year"),
                isRefund: refund || price < 0,
                purchaseDay: (try row.decode("purchase_day", as: String?.self)).flatMap(PacificDay.init),
                subscriberId: try row.decode("subscriber_id")
            )
            for _ in 0..<max(1, abs(units)) { events.append(event) }
        }
        return events
    }

    /// The window's days no imported Subscriber report covers.
    func daysWithoutSubscriberReport(from: PacificDay, to: PacificDay) throws -> [PacificDay] {
        try connection.query(
            """
            SELECT d::date::text AS day FROM generate_series($1::date, $2::date, interval '1 day') d
             WHERE NOT EXISTS (SELECT 1 FROM apple_report_files f WHERE f.kind = 'subscriber'
                                  AND d::date BETWEEN f.period_start AND f.period_end)
             ORDER BY 1
            """,
            [from.description, to.description]
        )
        .compactMap { PacificDay(try $0.decode("day", as: String.self)) }
    }

    /// The fiscal months (`YYYY-MM`) of the imported consolidated Financial reports.
    func financialMonths() throws -> Set<String> {
        Set(
            try connection.query(
                "SELECT DISTINCT fiscal_month FROM apple_report_files WHERE kind = 'financial' AND fiscal_month IS NOT NULL"
            )
            .map { try $0.decode("fiscal_month", as: String.self) }
        )
    }

    /// The fiscal months (`YYYY-MM`) of the imported detailed Financial reports.
    func detailedMonths() throws -> Set<String> {
        Set(
            try connection.query(
                """
                SELECT DISTINCT fiscal_month FROM apple_report_files
                 WHERE kind = 'finance_detail' AND fiscal_month IS NOT NULL
                """
            )
            .map { try $0.decode("fiscal_month", as: String.self) }
        )
    }

    /// Per month of `months` and key, what Apple's detailed reports show settled in another fiscal month than it was
    /// sold: the month's own report's transactions dated before it, the next month's report's dated in it.
    func settlements(_ months: [AppleFiscalMonth]) throws -> [TieOutSettlement] {
        guard !months.isEmpty else { return [] }
        let names = Set(months.map(\.name) + months.map(\.next.name))
        let rows = try connection.query(
            """
            SELECT f.fiscal_month, d.sku, d.country_of_sale, d.customer_currency, d.transaction_date::text AS day,
                   sum(d.quantity)::bigint AS quantity, sum(d.extended_partner_share_milliunits)::bigint AS amount
              FROM apple_finance_detail_rows d JOIN apple_report_files f ON f.id = d.file_id
             WHERE f.kind = 'finance_detail' AND f.fiscal_month = ANY($1::text[])
               AND d.partner_share_currency = d.customer_currency
             GROUP BY 1, 2, 3, 4, 5
            """,
            [names.sorted()]
        )
        var out: [String: TieOutSettlement] = [:]
        for row in rows {
            let reportMonth: String = try row.decode("fiscal_month")
            let dayText: String = try row.decode("day")
            guard let day = PacificDay(dayText) else {
                throw TieOutError(.failure, "apple_finance_detail_rows: Transaction Date \(dayText) is not a day")
            }
            let sold = AppleFiscalMonth(containing: day)
            let quantity = Int(try row.decode("quantity", as: Int64.self))
            let amount: Int64 = try row.decode("amount")
            let product: String = try row.decode("sku")
            let country: String = try row.decode("country_of_sale")
            let currency: String = try row.decode("customer_currency")
            for month in months {
                let settledIn = reportMonth == month.name && sold < month
                let settledLater = reportMonth == month.next.name && sold == month
                guard settledIn || settledLater else { continue }
                let id = "\(month.name)|\(product)|\(country)|\(currency)"
                var settlement =
                    out[id]
                    ?? TieOutSettlement(fiscalMonth: month, productId: product, country: country, currency: currency)
                if settledIn {
                    settlement.quantityIn += quantity
                    settlement.amountIn += amount
                } else {
                    settlement.quantityOut += quantity
                    settlement.amountOut += amount
                }
                out[id] = settlement
            }
        }
        return out.keys.sorted().compactMap { out[$0] }
    }

    /// The consolidated Financial report rows of `months`.
    func partnerShares(_ months: [AppleFiscalMonth]) throws -> [TieOutPartnerShare] {
        guard !months.isEmpty else { return [] }
        let byName = Dictionary(uniqueKeysWithValues: months.map { ($0.name, $0) })
        return try connection.query(
            """
            SELECT f.fiscal_month, r.vendor_identifier, r.country_of_sale, r.customer_currency, r.quantity,
                   r.extended_partner_share_milliunits, r.partner_share_currency
              FROM apple_financial_rows r JOIN apple_report_files f ON f.id = r.file_id
             WHERE f.fiscal_month = ANY($1::text[])
             ORDER BY f.fiscal_month, f.file_name, r.line
            """,
            [months.map(\.name)]
        )
        .compactMap { row -> TieOutPartnerShare? in
            guard let month = byName[try row.decode("fiscal_month", as: String.self)] else { return nil }
            return TieOutPartnerShare(
                fiscalMonth: month,
                productId: try row.decode("vendor_identifier"),
                country: try row.decode("country_of_sale"),
                currency: try row.decode("customer_currency"),
                quantity: try row.decode("quantity"),
                amount: try row.decode("extended_partner_share_milliunits"),
                shareCurrency: try row.decode("partner_share_currency")
            )
        }
    }
}
