import CivilTime
import Foundation
import Postgres
import ReceiptDomain

/// One outbox event as the webhook posts it (docs/events.md, "Delivery"): `{"type": "subscription.<kind>",
/// "timestamp": ..., "data": {...}}`, `data` carrying every column of the event but the delivery's own.
public struct EventPayload: Sendable {
    public var id: Int64
    public var subscriptionId: Int64
    public var sequence: Int64
    public var kind: String
    /// The row's other columns, by name: text, numbers and times as JSON values.
    var fields: [(String, JSONValue)]
    /// `before` and `after` as the database renders them (`jsonb::text`): JSON already.
    var before: String
    var after: String

    /// The columns `init(row:)` reads (`e` the events table).
    public static let columns = """
        e.id, e.subscription_id, e.sequence, e.kind, e.original_transaction_id, e.user_id, e.app_account_token,
        e.bundle_id, e.environment, e.before::text AS before, e.after::text AS after, e.reason, e.transaction_id,
        e.price_milliunits, e.currency, e.occurred_at, e.seen_at, e.source, e.run_id
        """

    public init(row: PostgresRow) throws {
        id = try row.decode("id")
        subscriptionId = try row.decode("subscription_id")
        sequence = try row.decode("sequence", as: Int64.self)
        kind = try row.decode("kind")
        before = try row.decode("before")
        after = try row.decode("after")
        func text(_ column: String) throws -> JSONValue {
            (try row.decode(column, as: String?.self)).map(JSONValue.string) ?? .null
        }
        func number(_ column: String) throws -> JSONValue {
            (try row.decode(column, as: Int64?.self)).map { .number(String($0)) } ?? .null
        }
        func time(_ column: String) throws -> JSONValue {
            (try row.decode(column, as: Date?.self)).map { .string(RFC3339.string($0)) } ?? .null
        }
        fields = [
            ("original_transaction_id", try text("original_transaction_id")), ("user_id", try text("user_id")),
            ("app_account_token", try text("app_account_token")), ("bundle_id", try text("bundle_id")),
            ("environment", try text("environment")), ("reason", try text("reason")),
            ("transaction_id", try text("transaction_id")), ("price_milliunits", try number("price_milliunits")),
            ("currency", try text("currency")), ("occurred_at", try time("occurred_at")),
            ("seen_at", try time("seen_at")), ("source", try text("source")), ("run_id", try number("run_id")),
        ]
    }

    /// The webhook's id and the event's: `evt_<id>`.
    public var webhookId: String { "evt_\(id)" }

    /// The request body, `timestamp` the time of sending.
    public func body(timestamp: Date) -> Data {
        var out = "{\"type\":"
        JSONValue.writeString("subscription.\(kind)", to: &out)
        out += ",\"timestamp\":"
        JSONValue.writeString(RFC3339.string(timestamp), to: &out)
        return Data((out + ",\"data\":" + data + "}").utf8)
    }

    /// The `data` object: the event's id, subscription, sequence, kind, `before` and `after`, then the other
    /// columns (docs/events.md, "Delivery"). Also a line of `events export --format jsonl`.
    public var data: String {
        var out = "{\"event_id\":"
        JSONValue.writeString(webhookId, to: &out)
        out += ",\"subscription_id\":\(subscriptionId),\"sequence\":\(sequence),\"kind\":"
        JSONValue.writeString(kind, to: &out)
        out += ",\"before\":\(before),\"after\":\(after)"
        for (name, value) in fields {
            out += ","
            JSONValue.writeString(name, to: &out)
            out += ":" + value.jsonText
        }
        return out + "}"
    }
}
