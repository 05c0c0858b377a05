import Postgres

/// Reads one customer's story from the database (docs/customer.md): the customer is every user id the query
/// names, and the story every subscription of those user ids. Read-only: nothing is written.
public struct CustomerLookup {
    let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// The user ids `query` names: a user id with subscriptions; the owner of the subscription an original
    /// transaction id (or any ledger transaction id) names; the owners of the rows or ledger transactions carrying an
    /// app account token (case-insensitively). An order id is resolved with Apple first: pass its original
    /// transaction ids with `originalTransactionIds`.
    public func userIds(for query: CustomerQuery) throws -> [String] {
        switch query {
        case .userId(let id):
            return try strings("SELECT DISTINCT user_id AS v FROM subscriptions WHERE user_id = $1", [id])
        case .originalTransactionId(let id):
            return try userIds(originalTransactionIds: [id])
        case .appAccountToken(let token):
            return try strings(
                """
                SELECT DISTINCT s.user_id AS v FROM subscriptions s
                 WHERE lower(s.app_account_token) = lower($1)
                    OR s.original_transaction_id IN (SELECT t.original_transaction_id FROM subscription_transactions t
                                                      WHERE lower(t.app_account_token) = lower($1))
                 ORDER BY 1
                """,
                [token]
            )
        case .orderId:
            return []
        }
    }

    /// The owners of the subscriptions these ids name, as original transaction ids or as ids of their transactions.
    public func userIds(originalTransactionIds ids: [String]) throws -> [String] {
        try strings(
            """
            SELECT DISTINCT s.user_id AS v FROM subscriptions s
             WHERE s.original_transaction_id = ANY($1)
                OR s.original_transaction_id IN (SELECT t.original_transaction_id FROM subscription_transactions t
                                                  WHERE t.transaction_id = ANY($1))
             ORDER BY 1
            """,
            [ids]
        )
    }

    /// Every subscription of `userIds`, by id, each with its checks, ledger, notifications, run history and events.
    public func subscriptions(of userIds: [String]) throws -> [CustomerSubscription] {
        let rows = try connection.query(
            """
            SELECT s.id, s.user_id, s.bundle_id, s.product_id, s.original_transaction_id, s.environment, s.state,
                   s.expires_at, s.auto_renew, s.auto_renew_product_id, s.grace_period_expires_at, s.in_billing_retry,
                   s.expiration_intent, s.is_trial, s.is_intro_offer, s.subscription_group_id, s.latest_transaction_id,
                   s.revoked_at, s.cancellation_reason, s.currency, s.app_account_token, s.app_transaction_id,
                   s.price_increase_status, s.renewal_price_milliunits, s.renewal_currency, s.renewal_billing_plan_type,
                   s.version, s.created_at, s.updated_at,
                   length(s.latest_receipt) AS latest_receipt_chars,
                   length(s.signed_transaction_info) AS signed_transaction_info_chars,
                   length(s.signed_renewal_info) AS signed_renewal_info_chars
              FROM subscriptions s WHERE s.user_id = ANY($1) ORDER BY s.id
            """,
            [userIds]
        )
        return try rows.map { row in
            let record = try CustomerRecord(row)
            let id: Int64 = try row.decode("id")
            let otid: String = try row.decode("original_transaction_id")
            return CustomerSubscription(
                row: record,
                checks: try checks(id),
                transactions: try records(Self.transactionsSQL, [otid]),
                notifications: try records(Self.notificationsSQL, [otid]),
                history: try records(Self.historySQL, [id]),
                events: try records(Self.eventsSQL, [id])
            )
        }
    }

    private func checks(_ id: Int64) throws -> CustomerRecord? {
        try connection.queryFirst(
            """
            SELECT last_verified_at, last_verify_status, last_apple_status, last_error, rejected_count, next_check_at,
                   verified_version, history_through
              FROM subscription_checks WHERE subscription_id = $1
            """,
            [id]
        ).map(CustomerRecord.init)
    }

    static let transactionsSQL = """
        SELECT transaction_id, kind, product_id, purchase_date, expires_date, price_milliunits, currency, storefront,
               offer, offer_type, offer_identifier, ownership_type, is_trial, is_intro_offer, is_upgraded,
               transaction_reason, cancellation_date, cancellation_reason, revocation_date, revocation_reason,
               revocation_type, revocation_percentage, app_account_token, environment, first_seen_run_id,
               refund_seen_run_id, first_seen_at
          FROM subscription_transactions WHERE original_transaction_id = $1
         ORDER BY purchase_date NULLS FIRST, transaction_id
        """

    static let notificationsSQL = """
        SELECT notification_uuid, notification_type, subtype, signed_date, environment, transaction_id, product_id,
               source, first_seen_run_id, received_at
          FROM app_store_notifications WHERE original_transaction_id = $1
         ORDER BY signed_date NULLS FIRST, notification_uuid
        """

    static let historySQL = """
        SELECT i.run_id, r.mode, r.dry_run, r.as_of, i.due_reason, i.status, i.outcome, i.previous_state, i.new_state,
               i.previous_expires_at, i.new_expires_at, i.previous_product_id, i.product_id, i.previous_auto_renew,
               i.auto_renew, i.environment, i.apple_status, i.attempts, i.reason, i.expiry_moved_backwards,
               i.finished_at
          FROM reconciliation_items i JOIN reconciliation_runs r ON r.id = i.run_id
         WHERE i.subscription_id = $1 ORDER BY i.run_id
        """

    /// What a `--refresh` run (a dry-run backfill) found for each subscription: its outcome and the stored values
    /// beside Apple's answer now.
    public func refreshed(runId: Int64) throws -> [CustomerRecord] {
        try records(
            """
            SELECT original_transaction_id, status, outcome, previous_state, new_state, previous_expires_at,
                   new_expires_at, previous_product_id, product_id, previous_auto_renew, auto_renew, reason
              FROM reconciliation_items WHERE run_id = $1 ORDER BY subscription_id
            """,
            [runId]
        )
    }

    static let eventsSQL = """
        SELECT id, sequence, kind, reason, before::text AS before, after::text AS after, transaction_id,
               price_milliunits, currency, occurred_at, seen_at, source, run_id
          FROM subscription_events WHERE subscription_id = $1 ORDER BY sequence
        """

    private func records(_ sql: String, _ params: [(any PostgresEncodable)?]) throws -> [CustomerRecord] {
        try connection.query(sql, params).map(CustomerRecord.init)
    }

    private func strings(_ sql: String, _ params: [(any PostgresEncodable)?]) throws -> [String] {
        try connection.query(sql, params).map { try $0.decode("v", as: String.self) }
    }
}
