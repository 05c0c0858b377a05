import Foundation
import Postgres
import ReceiptDomain

/// `events export`: the outbox's events for a warehouse (docs/events.md, "Export"), oldest first, read in pages by
/// id: JSON Lines (each line the webhook's `data` object) or CSV (one column per field, `before` and `after`
/// flattened).
public struct EventExporter: Sendable {
    public enum Format: String, Sendable, CaseIterable {
        case jsonl, csv
    }

    /// The CSV's columns: the event's fields, then the four values before and after.
    public static let csvColumns: [CSVColumn] =
        [
            CSVColumn("event_id"), CSVColumn("subscription_id", .numeric), CSVColumn("sequence", .numeric),
            CSVColumn("kind"), CSVColumn("original_transaction_id"), CSVColumn("user_id"),
            CSVColumn("app_account_token"), CSVColumn("bundle_id"), CSVColumn("environment"), CSVColumn("reason"),
            CSVColumn("transaction_id"), CSVColumn("price_milliunits", .numeric), CSVColumn("currency"),
            CSVColumn("occurred_at", .numeric), CSVColumn("seen_at", .numeric), CSVColumn("source"),
            CSVColumn("run_id", .numeric),
        ]
        + ["before", "after"].flatMap { side in
            [
                CSVColumn("\(side)_state"), CSVColumn("\(side)_expires_at", .numeric),
                CSVColumn("\(side)_product_id"), CSVColumn("\(side)_auto_renew"),
            ]
        }

    public let connection: PostgresConnection

    public init(connection: PostgresConnection) {
        self.connection = connection
    }

    /// Writes the events created at or after `since` (all when nil) with ids above `afterId`, to `handle`;
    /// returns how many.
    public func export(since: Date?, afterId: Int64, format: Format, to handle: FileHandle) throws -> Int {
        let writer = CSVWriter(columns: Self.csvColumns)
        if format == .csv { try handle.write(contentsOf: Data(writer.header().utf8)) }
        var last = afterId
        var count = 0
        while true {
            let page = try connection.query(
                """
                SELECT \(EventPayload.columns) FROM subscription_events e
                 WHERE e.id > $1 AND ($2::timestamptz IS NULL OR e.created_at >= $2)
                 ORDER BY e.id LIMIT 1000
                """,
                [last, since]
            ).map(EventPayload.init(row:))
            guard let tail = page.last else { return count }
            for event in page {
                let line = format == .jsonl ? event.data + "\n" : try writer.row(Self.csvValues(event))
                try handle.write(contentsOf: Data(line.utf8))
            }
            last = tail.id
            count += page.count
        }
    }

    /// One event's CSV values, in `csvColumns`' order (empty for null).
    static func csvValues(_ event: EventPayload) throws -> [String] {
        func text(_ value: JSONValue) -> String {
            switch value {
            case .string(let string): string
            case .number(let number): number
            case .bool(let flag): flag ? "true" : "false"
            default: ""
            }
        }
        let fields = Dictionary(event.fields, uniquingKeysWith: { first, _ in first })
        let head = [event.webhookId, String(event.subscriptionId), String(event.sequence), event.kind]
        let rest = csvColumns[4..<17].map { text(fields[$0.name] ?? .null) }
        let sides = try [event.before, event.after].flatMap { json -> [String] in
            let snapshot = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] ?? [:]
            return ["state", "expires_at", "product_id", "auto_renew"].map { key in
                switch snapshot[key] {
                case let string as String: string
                case let flag as Bool: flag ? "true" : "false"
                default: ""
                }
            }
        }
        return head + rest + sides
    }
}
