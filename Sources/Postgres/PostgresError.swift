import Foundation

/// An error from the PostgreSQL wrapper: connecting, running a statement, decoding a value, or
/// managing a throwaway cluster.
///
/// The `description` is safe to log: it never contains a password from a connection string,
/// and long server texts (which may echo row values such as receipts) are truncated.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// The broad category of a `PostgresError`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let raw: String
        private init(_ raw: String) { self.raw = raw }
        public var description: String { raw }

        /// Could not connect, or the connection was lost outside a transaction.
        public static let connection = Code("connection")
        /// The connection was lost while a transaction was open; retry the whole transaction.
        public static let connectionLostInTransaction = Code("connectionLostInTransaction")
        /// The server rejected the statement (see `sqlState`).
        public static let query = Code("query")
        /// A parameter could not be encoded (e.g. a string containing NUL).
        public static let encoding = Code("encoding")
        /// A result value could not be decoded into the requested Swift type.
        public static let decoding = Code("decoding")
        /// The connection was used by two callers at once (or re-entered from a row callback).
        public static let concurrentUse = Code("concurrentUse")
        /// The connection was already closed.
        public static let closed = Code("closed")
        /// Misuse of a transaction (e.g. committing an already-aborted transaction).
        public static let transaction = Code("transaction")
        /// A throwaway cluster could not be created, started or stopped.
        public static let cluster = Code("cluster")
        /// After a reconnect, a session advisory lock this connection held could not be re-taken.
        public static let advisoryLockLost = Code("advisoryLockLost")
    }

    public var code: Code
    /// Five-character SQLSTATE from the server (e.g. "23505"), when the server sent one.
    public var sqlState: String?
    /// The primary human-readable message.
    public var message: String
    public var detail: String?
    public var hint: String?
    /// The statement text (not its parameters), truncated; parameters never appear in errors.
    public var statement: String?
    /// True when libpq reported the connection as broken when this error was raised.
    public var connectionBroken: Bool

    public init(
        code: Code,
        message: String,
        sqlState: String? = nil,
        detail: String? = nil,
        hint: String? = nil,
        statement: String? = nil,
        connectionBroken: Bool = false
    ) {
        self.code = code
        self.message = message
        self.sqlState = sqlState
        self.detail = detail
        self.hint = hint
        self.statement = statement.map { PostgresError.truncate($0, limit: 200) }
        self.connectionBroken = connectionBroken
    }

    /// True when the failure is about the connection rather than the statement: retrying the
    /// work (the statement, or the whole transaction) on a fresh connection may succeed.
    public var isConnectionError: Bool {
        if code == .connection || code == .connectionLostInTransaction || connectionBroken { return true }
        guard let state = sqlState else { return false }
        // Class 08: connection exception; 57P01..57P03: admin/crash shutdown, cannot connect now.
        return state.hasPrefix("08") || state == "57P01" || state == "57P02" || state == "57P03"
    }

    /// SQLSTATE 23505.
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// SQLSTATE 40001 (serialization failure) or 40P01 (deadlock): retry the transaction.
    public var isTransactionRetryable: Bool { sqlState == "40001" || sqlState == "40P01" }

    public var description: String {
        var text = "PostgreSQL \(code) error"
        if let sqlState { text += " (SQLSTATE \(sqlState))" }
        text += ": " + PostgresError.truncate(message, limit: 300)
        if let detail, !detail.isEmpty { text += "; detail: " + PostgresError.truncate(detail, limit: 200) }
        if let hint, !hint.isEmpty { text += "; hint: " + PostgresError.truncate(hint, limit: 200) }
        if let statement { text += "; statement: " + statement }
        return text
    }

    /// Shortens `text` to `limit` characters, noting the original length, so that server messages
    /// that echo values (receipts, payloads) cannot flood logs.
    static func truncate(_ text: String, limit: Int) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count > limit else { return trimmed }
        return String(trimmed.prefix(limit)) + "…(\(trimmed.count) chars)"
    }
}
