import Foundation
import Postgres
import ReceiptDomain

/// Writes the events of a batch's changes into `subscription_events` (sql/024_subscription_events.sql), on the
/// batch's connection inside its transaction: an event is committed exactly when the change it describes is
/// (docs/events.md, "When an event is written").
public struct EventOutbox: Sendable {
    /// One changed subscription and the events of its change.
    public struct Change: Sendable {
        public var subscriptionId: Int64
        public var transitions: SubscriptionTransitions
        /// The app's id for the customer: the decision's, else the stored row's.
        public var appAccountToken: String?
        public var source: Source

        public init(
            subscriptionId: Int64,
            transitions: SubscriptionTransitions,
            appAccountToken: String?,
            source: Source
        ) {
            self.subscriptionId = subscriptionId
            self.transitions = transitions
            self.appAccountToken = appAccountToken
            self.source = source
        }
    }

    /// What found the change (`subscription_events.source`).
    public enum Source: String, Sendable {
        case run, notification, backfill
    }

    public let runId: Int64?
    public let seenAt: Date

    public init(runId: Int64?, seenAt: Date) {
        self.runId = runId
        self.seenAt = seenAt
    }

    /// Inserts the events of `changes` (none: no statement). Each subscription's events take the sequence numbers
    /// after its last one; the batch holds the subscription rows' locks, so no other writer numbers them meanwhile.
    /// Returns the number of events written.
    @discardableResult
    public func insert(_ changes: [Change], _ conn: PostgresConnection) throws -> Int {
        var rows: [(change: Change, event: SubscriptionEventDraft, ordinal: Int64)] = []
        for change in changes {
            for (index, event) in change.transitions.events.enumerated() {
                rows.append((change, event, Int64(index + 1)))
            }
        }
        guard !rows.isEmpty else { return 0 }
        func column<T>(_ value: (Change, SubscriptionEventDraft) -> T) -> [T] {
            rows.map { value($0.change, $0.event) }
        }
        let snapshots = rows.map { $0.change.transitions.snapshots }
        try conn.execute(
            Self.insertSQL,
            [
                runId, seenAt,
                column { c, _ in Optional(c.subscriptionId) }, rows.map { Optional($0.ordinal) },
                column { _, e in Optional(e.kind.rawValue) },
                column { c, _ in Optional(c.transitions.before.originalTransactionId) },
                column { c, _ in c.transitions.before.userId.isEmpty ? nil : c.transitions.before.userId },
                column { c, _ in c.appAccountToken }, column { c, _ in c.transitions.before.bundleId },
                column { c, _ in (c.transitions.after.environment ?? c.transitions.before.environment)?.rawValue },
                snapshots.map { Optional($0.before.json) }, snapshots.map { Optional($0.after.json) },
                column { _, e in e.reason }, column { _, e in e.transactionId }, column { _, e in e.priceMilliunits },
                column { _, e in e.currency }, column { _, e in e.occurredAt },
                column { c, _ in Optional(c.source.rawValue) },
            ]
        )
        return rows.count
    }

    /// `$1` the run, `$2` when seen, `$3...$18` one array per column.
    static let insertSQL = """
        INSERT INTO subscription_events (subscription_id, sequence, kind, original_transaction_id, user_id,
                                         app_account_token, bundle_id, environment, before, after, reason,
                                         transaction_id, price_milliunits, currency, occurred_at, seen_at, source,
                                         run_id)
        SELECT v.subscription_id,
               COALESCE((SELECT max(e.sequence) FROM subscription_events e
                          WHERE e.subscription_id = v.subscription_id), 0) + v.ordinal,
               v.kind, v.original_transaction_id, v.user_id, v.app_account_token, v.bundle_id, v.environment,
               v.before::jsonb, v.after::jsonb, v.reason, v.transaction_id, v.price_milliunits, v.currency,
               v.occurred_at, $2, v.source, $1
          FROM unnest($3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
                      $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::bigint[], $16::text[],
                      $17::timestamptz[], $18::text[])
            AS v(subscription_id, ordinal, kind, original_transaction_id, user_id, app_account_token, bundle_id,
                 environment, before, after, reason, transaction_id, price_milliunits, currency, occurred_at,
                 source)
         ORDER BY v.subscription_id, v.ordinal
        """
}
