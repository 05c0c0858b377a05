import Postgres
import ReceiptDomain

/// The statements that write the transaction ledger (`subscription_transactions`, and a dry run's
/// `dry_run_transactions`), for the run's decided items and for the one-time purchases notifications carry
/// (docs/architecture.md, "The stages of a run, and where each lives"). Each runs on the connection given, inside the
/// caller's transaction.
struct LedgerWriter {
    /// One transaction to write, with the environment its answer came from.
    struct Row {
        var environment: AppleEnvironment?
        var entry: LedgerEntry
    }

    /// The run that saw the rows (`first_seen_run_id`, `refund_seen_run_id`); nil for rows stored outside a run (a
    /// notifications import), which no run's report counts.
    let runId: Int64?

    /// Inserts each transaction once, first seen by the run (a refund: its refund seen by it too), and updates a
    /// stored one when Apple's answer adds a refund, an upgrade or signed facts it lacked.
    func insert(_ entries: [Row], _ conn: PostgresConnection) throws {
        let unique = Self.deduplicated(entries)
        guard !unique.isEmpty else { return }
        try conn.execute(
            """
            INSERT INTO subscription_transactions AS t (
                transaction_id, original_transaction_id, product_id, subscription_group_id, web_order_line_item_id,
                kind, purchase_date, expires_date, is_trial, is_intro_offer, offer, ownership_type, is_upgraded,
                cancellation_date, cancellation_reason, environment, first_seen_run_id, refund_seen_run_id,
                price_milliunits, currency, storefront, offer_type, offer_discount_type, revocation_date,
                revocation_reason, revocation_type, revocation_percentage, transaction_reason, signed_transaction,
                offer_identifier, offer_period, app_account_token, app_transaction_id, billing_plan_type)
            SELECT v.transaction_id, v.original_transaction_id, v.product_id, v.subscription_group_id,
                   v.web_order_line_item_id, v.kind, v.purchase_date, v.expires_date, v.is_trial, v.is_intro_offer,
                   v.offer, v.ownership_type, v.is_upgraded, v.cancellation_date, v.cancellation_reason,
                   v.environment, $1::bigint, CASE WHEN v.kind = 'refund' THEN $1::bigint END,
                   p.price_milliunits, p.currency, p.storefront, p.offer_type, p.offer_discount_type,
                   CASE WHEN p.signed_transaction IS NOT NULL THEN v.cancellation_date END,
                   CASE WHEN p.signed_transaction IS NOT NULL THEN v.cancellation_reason END,
                   p.revocation_type, p.revocation_percentage, p.transaction_reason, p.signed_transaction,
                   p.offer_identifier, p.offer_period, p.app_account_token, p.app_transaction_id, p.billing_plan_type
            \(Self.ledgerUnnest)
            \(Self.pricingUnnest)
            ON CONFLICT (transaction_id) DO UPDATE SET
                cancellation_date = EXCLUDED.cancellation_date,
                cancellation_reason = EXCLUDED.cancellation_reason,
                is_upgraded = EXCLUDED.is_upgraded,
                kind = CASE WHEN EXCLUDED.kind = 'refund' THEN 'refund'
                            WHEN t.kind = 'refund' AND EXCLUDED.cancellation_date IS NULL THEN EXCLUDED.kind
                            ELSE t.kind END,
                refund_seen_run_id = CASE WHEN EXCLUDED.kind = 'refund' AND t.kind <> 'refund' THEN $1::bigint
                                          ELSE t.refund_seen_run_id END,
                price_milliunits = COALESCE(EXCLUDED.price_milliunits, t.price_milliunits),
                currency = COALESCE(EXCLUDED.currency, t.currency),
                storefront = COALESCE(EXCLUDED.storefront, t.storefront),
                offer_type = COALESCE(EXCLUDED.offer_type, t.offer_type),
                offer_discount_type = COALESCE(EXCLUDED.offer_discount_type, t.offer_discount_type),
                revocation_date = CASE WHEN EXCLUDED.signed_transaction IS NOT NULL THEN EXCLUDED.revocation_date
                                       ELSE t.revocation_date END,
                revocation_reason = CASE WHEN EXCLUDED.signed_transaction IS NOT NULL THEN EXCLUDED.revocation_reason
                                         ELSE t.revocation_reason END,
                revocation_type = CASE WHEN EXCLUDED.signed_transaction IS NOT NULL THEN EXCLUDED.revocation_type
                                       ELSE t.revocation_type END,
                revocation_percentage = CASE WHEN EXCLUDED.signed_transaction IS NOT NULL
                                             THEN EXCLUDED.revocation_percentage ELSE t.revocation_percentage END,
                transaction_reason = COALESCE(EXCLUDED.transaction_reason, t.transaction_reason),
                signed_transaction = COALESCE(EXCLUDED.signed_transaction, t.signed_transaction),
                offer_identifier = COALESCE(EXCLUDED.offer_identifier, t.offer_identifier),
                offer_period = COALESCE(EXCLUDED.offer_period, t.offer_period),
                app_account_token = COALESCE(EXCLUDED.app_account_token, t.app_account_token),
                app_transaction_id = COALESCE(EXCLUDED.app_transaction_id, t.app_transaction_id),
                billing_plan_type = COALESCE(EXCLUDED.billing_plan_type, t.billing_plan_type)
            WHERE t.cancellation_date IS DISTINCT FROM EXCLUDED.cancellation_date
               OR t.is_upgraded IS DISTINCT FROM EXCLUDED.is_upgraded
               OR (EXCLUDED.kind = 'refund' AND t.kind <> 'refund')
               OR (EXCLUDED.signed_transaction IS NOT NULL AND t.signed_transaction IS NULL)
               OR t.revocation_percentage IS DISTINCT FROM COALESCE(EXCLUDED.revocation_percentage, t.revocation_percentage)
               OR (EXCLUDED.app_transaction_id IS NOT NULL AND t.app_transaction_id IS NULL)
               OR t.app_account_token IS DISTINCT FROM COALESCE(EXCLUDED.app_account_token, t.app_account_token)
            """,
            [runId] + Self.ledgerColumns(unique) + Self.pricingColumns(unique)
        )
    }

    /// A dry run's would-be ledger rows: what `insert` would add or change, kept apart in `dry_run_transactions`.
    func insertDryRun(_ entries: [Row], _ conn: PostgresConnection) throws {
        let unique = Self.deduplicated(entries)
        guard !unique.isEmpty else { return }
        try conn.execute(
            """
            INSERT INTO dry_run_transactions (
                run_id, transaction_id, original_transaction_id, product_id, subscription_group_id, kind,
                purchase_date, expires_date, is_trial, is_intro_offer, offer, cancellation_date, cancellation_reason,
                ownership_type, price_milliunits, currency, storefront, revocation_type, revocation_percentage,
                offer_type)
            SELECT $1::bigint, v.transaction_id, v.original_transaction_id, v.product_id, v.subscription_group_id, v.kind,
                   v.purchase_date, v.expires_date, v.is_trial, v.is_intro_offer, v.offer, v.cancellation_date,
                   v.cancellation_reason, v.ownership_type, p.price_milliunits, p.currency, p.storefront,
                   p.revocation_type, p.revocation_percentage, p.offer_type
            \(Self.ledgerUnnest)
            \(Self.pricingUnnest)
            WHERE NOT EXISTS (
                SELECT 1 FROM subscription_transactions t
                 WHERE t.transaction_id = v.transaction_id
                   AND t.cancellation_date IS NOT DISTINCT FROM v.cancellation_date)
            ON CONFLICT (run_id, transaction_id) DO NOTHING
            """,
            [runId] + Self.ledgerColumns(unique) + Self.pricingColumns(unique)
        )
    }

    /// The same transaction can only be written once per statement (ON CONFLICT DO UPDATE refuses to
    /// touch a row twice); keep the first of each id.
    private static func deduplicated(_ entries: [Row]) -> [Row] {
        var seen = Set<String>()
        return entries.filter { seen.insert($0.entry.transactionId).inserted }
    }

    /// The ledger entries as a row source `v`, bound to `$2...$17` (see `ledgerColumns`).
    private static let ledgerUnnest = """
        FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[],
                    $9::timestamptz[], $10::boolean[], $11::boolean[], $12::text[], $13::text[], $14::boolean[],
                    $15::timestamptz[], $16::bigint[], $17::text[])
            AS v(transaction_id, original_transaction_id, product_id, subscription_group_id,
                 web_order_line_item_id, kind, purchase_date, expires_date, is_trial, is_intro_offer, offer,
                 ownership_type, is_upgraded, cancellation_date, cancellation_reason, environment)
        """

    private static func ledgerColumns(_ entries: [Row]) -> [(any PostgresEncodable)?] {
        [
            entries.map { Optional($0.entry.transactionId) },
            entries.map { Optional($0.entry.originalTransactionId) },
            entries.map { Optional($0.entry.productId) },
            entries.map { $0.entry.subscriptionGroupIdentifier },
            entries.map { $0.entry.webOrderLineItemId },
            entries.map { Optional($0.entry.kind.rawValue) },
            entries.map { $0.entry.purchaseDate },
            entries.map { $0.entry.expiresDate },
            entries.map { Optional($0.entry.isTrial) },
            entries.map { Optional($0.entry.isIntroOffer) },
            entries.map { $0.entry.offer },
            entries.map { $0.entry.ownershipType },
            entries.map { Optional($0.entry.replacedByUpgrade) },
            entries.map { $0.entry.cancellationDate },
            entries.map { $0.entry.cancellationReason.map(Int64.init) },
            entries.map { $0.environment?.rawValue },
        ]
    }

    /// What the App Store Server API adds to each ledger entry as a row source `p` joined to `v`, bound to `$18...$32`
    /// (see `pricingColumns`).
    private static let pricingUnnest = """
        JOIN unnest($18::text[], $19::bigint[], $20::text[], $21::text[], $22::bigint[], $23::text[],
                    $24::text[], $25::bigint[], $26::text[], $27::text[], $28::text[], $29::text[], $30::text[],
                    $31::text[], $32::text[])
            AS p(transaction_id, price_milliunits, currency, storefront, offer_type, offer_discount_type,
                 revocation_type, revocation_percentage, transaction_reason, signed_transaction,
                 offer_identifier, offer_period, app_account_token, app_transaction_id, billing_plan_type)
          ON p.transaction_id = v.transaction_id
        """

    /// What the App Store Server API adds to each ledger entry, bound to `$18...$32`.
    private static func pricingColumns(_ entries: [Row]) -> [(any PostgresEncodable)?] {
        [
            entries.map { Optional($0.entry.transactionId) },
            entries.map { $0.entry.signedFacts?.priceMilliunits },
            entries.map { $0.entry.signedFacts?.currency },
            entries.map { $0.entry.signedFacts?.storefront },
            entries.map { $0.entry.signedFacts?.offerType.map(Int64.init) },
            entries.map { $0.entry.signedFacts?.offerDiscountType },
            entries.map { $0.entry.signedFacts?.revocationType },
            entries.map { $0.entry.signedFacts?.revocationPercentage },
            entries.map { $0.entry.signedFacts?.transactionReason },
            entries.map { $0.entry.signedFacts?.signedTransaction },
            entries.map { $0.entry.signedFacts?.offerIdentifier },
            entries.map { $0.entry.signedFacts?.offerPeriod },
            entries.map { $0.entry.signedFacts?.appAccountToken },
            entries.map { $0.entry.signedFacts?.appTransactionId },
            entries.map { $0.entry.signedFacts?.billingPlanType },
        ]
    }
}
