import CLibpq
import Foundation
import Synchronization

/// A blocking connection to PostgreSQL over libpq, with parameterised statements only,
/// typed decoding, transactions, advisory locks and one transparent reconnect.
///
/// Threading rule: one connection is used by one thread at a time (a worker owns it, or a
/// pool hands it out). The class is `@unchecked Sendable` so it can be *moved* between
/// threads; it is not safe to *share*. The rule is enforced cheaply: every call takes a
/// `busy` flag (a `Mutex<Bool>`, try-acquire, never blocking); a second concurrent caller, or a
/// call made from inside a `forEachRow` callback, gets `PostgresError.Code.concurrentUse`
/// instead of corrupting libpq state. All mutable state below is only touched while that flag
/// is held (or in `deinit`, when no other reference exists).
///
/// Reconnect: when the server went away, the next call resets the connection before sending.
/// When a statement fails because the connection broke, it is retried once on a fresh
/// connection if no transaction was open (autocommit). Inside a transaction nothing is
/// retried: the call throws `.connectionLostInTransaction` (and so does every later call until
/// `ROLLBACK`), so the caller retries the whole transaction. Note: a statement whose connection
/// broke *after* the server committed it would run twice; keep autocommit writes idempotent
/// (upserts) or pass `retryAfterReconnect: false`.
public final class PostgresConnection: @unchecked Sendable {
    /// The connection string with its password removed, for logs.
    public let redactedConnectionString: String
    /// Whether an autocommit statement is retried once after a reconnect.
    public let retryAfterReconnect: Bool

    private let connectionString: String
    private let busy = Mutex<Bool>(false)
    private let noticeBox: NoticeBox
    private let reconnects = Atomic<Int>(0)
    /// Held session advisory locks: key → taken shared.
    private let advisoryLocks = Mutex<[Int64: Bool]>([:])

    // Guarded by `busy` (see the threading rule above).
    private var handle: OpaquePointer?
    private var inTransaction = false
    private var transactionLost = false
    // Nesting depth of `transaction {}`; owner-thread state under the one-thread-at-a-time rule.
    var transactionDepth = 0

    /// Connects with a libpq connection string or URI (e.g. `DATABASE_URL`).
    /// - Parameters:
    ///   - onNotice: receives server NOTICE/WARNING messages; by default they are dropped
    ///     (libpq would print them to stderr).
    public init(
        _ connectionString: String,
        retryAfterReconnect: Bool = true,
        onNotice: (@Sendable (String) -> Void)? = nil
    ) throws {
        self.connectionString = connectionString
        self.redactedConnectionString = PostgresConnectionString.redacted(connectionString)
        self.retryAfterReconnect = retryAfterReconnect
        self.noticeBox = NoticeBox(handler: onNotice)
        guard let conn = PQconnectdb(connectionString) else {
            throw PostgresError(code: .connection, message: "libpq could not allocate a connection")
        }
        guard PQstatus(conn) == CONNECTION_OK else {
            let message = scrubbed(String(cString: PQerrorMessage(conn)))
            PQfinish(conn)
            throw PostgresError(
                code: .connection,
                message: "could not connect to \(redactedConnectionString): \(message)",
                connectionBroken: true
            )
        }
        handle = conn
        PQsetNoticeProcessor(
            conn,
            { context, message in
                guard let context, let message else { return }
                let box = Unmanaged<NoticeBox>.fromOpaque(context).takeUnretainedValue()
                box.handler?(String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines))
            },
            Unmanaged.passUnretained(noticeBox).toOpaque()
        )
        do {
            try configureSession(conn)
        } catch {
            PQfinish(conn)
            handle = nil
            throw error
        }
    }

    deinit {
        if let handle { PQfinish(handle) }
    }

    /// Closes the connection (idempotent). Later calls throw `.closed`. Ignored if another
    /// thread is using the connection right now (a misuse); `deinit` closes it then.
    public func close() {
        _ = try? withExclusiveUse {
            if let handle { PQfinish(handle) }
            handle = nil
        }
    }

    /// How many times the connection was re-established after the server went away.
    public var reconnectCount: Int { reconnects.load(ordering: .relaxed) }

    /// Advisory lock keys this connection currently holds (session level).
    public var heldAdvisoryLocks: Set<Int64> { advisoryLocks.withLock { Set($0.keys) } }
    /// The held advisory lock keys taken in shared mode.
    public var heldSharedAdvisoryLocks: Set<Int64> { advisoryLocks.withLock { Set($0.filter(\.value).keys) } }

    // MARK: - Statements

    /// Runs one statement with `$1, $2, ...` parameters and returns its rows and command tag.
    @discardableResult
    public func execute(_ sql: String, _ params: [(any PostgresEncodable)?] = []) throws -> PostgresResult {
        let values = params.map { $0?.postgresValue ?? .null }
        return try withExclusiveUse { try runLocked(sql, values) }
    }

    /// Runs a query and returns its rows.
    public func query(_ sql: String, _ params: [(any PostgresEncodable)?] = []) throws -> [PostgresRow] {
        try execute(sql, params).rows
    }

    /// Runs a query and returns its first row, or nil when it returned none.
    public func queryFirst(_ sql: String, _ params: [(any PostgresEncodable)?] = []) throws -> PostgresRow? {
        try execute(sql, params).first
    }

    // MARK: - Internals shared with the extensions

    /// Runs `body` holding the busy flag; throws `.concurrentUse` if it is already held.
    func withExclusiveUse<T>(_ body: () throws -> T) throws -> T {
        let acquired = busy.withLock { isBusy in
            if isBusy { return false }
            isBusy = true
            return true
        }
        guard acquired else {
            throw PostgresError(
                code: .concurrentUse,
                message:
                    "connection is already in use (concurrent use from two threads, or a call from inside forEachRow)"
            )
        }
        defer { busy.withLock { $0 = false } }
        return try body()
    }

    /// The open handle, resetting it first if the server went away (nothing was sent yet, so
    /// this is always safe outside a transaction). Must hold the busy flag.
    func readyHandleLocked(for sql: String) throws -> (conn: OpaquePointer, handled: PostgresResult?) {
        guard let conn = handle else {
            throw PostgresError(code: .closed, message: "connection is closed", statement: sql)
        }
        if !transactionLost, PQstatus(conn) != CONNECTION_OK, inTransaction {
            transactionLost = true
            inTransaction = false
        }
        if transactionLost {
            guard Self.isRollback(sql) else {
                throw PostgresError(
                    code: .connectionLostInTransaction,
                    message:
                        "the connection was lost while a transaction was open; ROLLBACK and retry the whole transaction",
                    statement: sql,
                    connectionBroken: true
                )
            }
            // The server already discarded the transaction; accept the ROLLBACK locally.
            transactionLost = false
            if PQstatus(conn) != CONNECTION_OK { try resetLocked(conn, statement: sql) }
            return (conn, PostgresResult(storage: .empty, commandTag: "ROLLBACK", rowsAffected: 0))
        }
        if PQstatus(conn) != CONNECTION_OK { try resetLocked(conn, statement: sql) }
        return (conn, nil)
    }

    private func runLocked(_ sql: String, _ values: [PostgresValue]) throws -> PostgresResult {
        let (conn, handled) = try readyHandleLocked(for: sql)
        if let handled { return handled }
        let wasIdle = PQtransactionStatus(conn) == PQTRANS_IDLE
        do {
            let result = try execOnceLocked(conn, sql, values)
            noteTransactionStatus(conn)
            return result
        } catch let error as PostgresError where PQstatus(conn) == CONNECTION_BAD {
            guard wasIdle else {
                inTransaction = false
                transactionLost = true
                throw PostgresError(
                    code: .connectionLostInTransaction,
                    message:
                        "connection lost inside a transaction (\(error.message)); ROLLBACK and retry the whole transaction"
                        + (Self.isCommit(sql) ? " (the COMMIT's outcome is unknown)" : ""),
                    sqlState: error.sqlState,
                    statement: sql,
                    connectionBroken: true
                )
            }
            guard retryAfterReconnect else { throw error }
            try resetLocked(conn, statement: sql)
            let result = try execOnceLocked(conn, sql, values)
            noteTransactionStatus(conn)
            return result
        } catch {
            noteTransactionStatus(conn)
            throw error
        }
    }

    func noteTransactionStatus(_ conn: OpaquePointer) {
        let status = PQtransactionStatus(conn)
        if status == PQTRANS_INTRANS || status == PQTRANS_INERROR {
            inTransaction = true
        } else if status == PQTRANS_IDLE {
            inTransaction = false
        }
    }

    /// Whether the server considers the current transaction aborted (must hold the busy flag).
    func transactionIsAbortedLocked() -> Bool {
        guard let handle else { return false }
        return PQtransactionStatus(handle) == PQTRANS_INERROR
    }

    var isInTransactionLocked: Bool {
        guard let handle else { return false }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || transactionLost
    }

    private func execOnceLocked(
        _ conn: OpaquePointer,
        _ sql: String,
        _ values: [PostgresValue]
    ) throws
        -> PostgresResult
    {
        let result = try withParameters(values, statement: sql) { p in
            PQexecParams(conn, sql, p.count, p.types, p.values, p.lengths, p.formats, 0)
        }
        return try consumeResult(conn, result, statement: sql)
    }

    /// libpq's parameter arrays for one call: the declared types, each value's bytes, their lengths and formats.
    typealias ParameterArrays = (
        count: Int32, types: UnsafePointer<Oid>?, values: UnsafePointer<UnsafePointer<CChar>?>?,
        lengths: UnsafePointer<Int32>?, formats: UnsafePointer<Int32>?
    )

    /// Encodes parameters in one buffer that lives only for the call: NUL-terminated text, or binary for text arrays
    /// (`PostgresValue.sendsBinary`).
    func withParameters<T>(
        _ values: [PostgresValue],
        statement: String,
        _ body: (ParameterArrays) -> T
    ) throws -> T {
        guard values.count <= 65_535 else {
            throw PostgresError(
                code: .encoding,
                message: "\(values.count) parameters exceed the protocol limit of 65535; use an array parameter",
                statement: statement
            )
        }
        var buffer: [UInt8] = []
        var offsets: [Int?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        offsets.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            let start = buffer.count
            let binary = value.sendsBinary
            let present: Bool
            do {
                if binary {
                    try value.appendBinaryTextArray(to: &buffer)
                    present = true
                } else {
                    present = try value.appendTextRepresentation(to: &buffer)
                }
            } catch var error as PostgresError {
                error.message = "parameter $\(index + 1): " + error.message
                error.statement = statement
                throw error
            }
            lengths.append(Int32(clamping: buffer.count - start))
            formats.append(binary ? 1 : 0)
            guard present else {
                offsets.append(nil)
                continue
            }
            offsets.append(start)
            if !binary { buffer.append(0) }
        }
        buffer.append(0)  // never empty, so baseAddress is never nil
        let types: [Oid] = values.map { Oid($0.typeOID) }
        return buffer.withUnsafeBytes { raw in
            let base = raw.bindMemory(to: CChar.self).baseAddress
            let pointers: [UnsafePointer<CChar>?] = offsets.map { offset -> UnsafePointer<CChar>? in
                guard let offset, let base else { return nil }
                return UnsafePointer(base + offset)
            }
            return pointers.withUnsafeBufferPointer { p in
                types.withUnsafeBufferPointer { t in
                    lengths.withUnsafeBufferPointer { l in
                        formats.withUnsafeBufferPointer { f in
                            body((Int32(values.count), t.baseAddress, p.baseAddress, l.baseAddress, f.baseAddress))
                        }
                    }
                }
            }
        }
    }

    /// Copies a result out of libpq and clears it, or converts it into an error.
    func consumeResult(_ conn: OpaquePointer, _ result: OpaquePointer?, statement: String) throws -> PostgresResult {
        guard let result else {
            throw PostgresError(
                code: .connection,
                message: scrubbed(String(cString: PQerrorMessage(conn))),
                statement: statement,
                connectionBroken: PQstatus(conn) == CONNECTION_BAD
            )
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        switch status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_SINGLE_TUPLE, PGRES_EMPTY_QUERY:
            return Self.copyResult(result)
        case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH:
            _ = PQputCopyEnd(conn, "COPY is not supported by this wrapper")
            while let extra = PQgetResult(conn) { PQclear(extra) }
            throw PostgresError(code: .query, message: "COPY is not supported by this wrapper", statement: statement)
        default:
            throw error(from: result, conn: conn, statement: statement)
        }
    }

    func error(from result: OpaquePointer, conn: OpaquePointer, statement: String) -> PostgresError {
        func field(_ code: Int32) -> String? {
            guard let pointer = PQresultErrorField(result, code) else { return nil }
            return scrubbed(String(cString: pointer))
        }
        let primary =
            field(clibpq_diag_message_primary())
            ?? scrubbed(String(cString: PQresultErrorMessage(result)))
        let broken = PQstatus(conn) == CONNECTION_BAD
        return PostgresError(
            code: broken ? .connection : .query,
            message: primary.isEmpty ? scrubbed(String(cString: PQerrorMessage(conn))) : primary,
            sqlState: field(clibpq_diag_sqlstate()),
            detail: field(clibpq_diag_message_detail()),
            hint: field(clibpq_diag_message_hint()),
            statement: statement,
            connectionBroken: broken
        )
    }

    /// Copies `result` out of libpq; `columns`, when they match the result's, are shared instead of built again.
    static func copyResult(_ result: OpaquePointer, columns known: PostgresColumns? = nil) -> PostgresResult {
        let columns = known.flatMap { $0.match(result) ? $0 : nil } ?? PostgresColumns.of(result)
        let columnCount = columns.names.count
        let rowCount = Int(PQntuples(result))
        var values: [String?] = []
        values.reserveCapacity(rowCount * columnCount)
        for r in 0..<rowCount {
            for c in 0..<columnCount {
                if PQgetisnull(result, Int32(r), Int32(c)) == 1 {
                    values.append(nil)
                } else if let pointer = PQgetvalue(result, Int32(r), Int32(c)) {
                    let length = Int(PQgetlength(result, Int32(r), Int32(c)))
                    let bytes = UnsafeRawBufferPointer(start: pointer, count: length)
                    values.append(String(decoding: bytes, as: UTF8.self))
                } else {
                    values.append(nil)
                }
            }
        }
        let tag = PQcmdStatus(result).map { String(cString: $0) } ?? ""
        let affected = PQcmdTuples(result).flatMap { Int(String(cString: $0)) } ?? 0
        return PostgresResult(
            storage: PostgresResultStorage(columns: columns, values: values),
            commandTag: tag,
            rowsAffected: affected
        )
    }

    /// Re-establishes the connection, restores session settings and re-takes advisory locks.
    func resetLocked(_ conn: OpaquePointer, statement: String?) throws {
        PQreset(conn)
        inTransaction = false
        guard PQstatus(conn) == CONNECTION_OK else {
            throw PostgresError(
                code: .connection,
                message: "reconnect to \(redactedConnectionString) failed: "
                    + scrubbed(String(cString: PQerrorMessage(conn))),
                statement: statement,
                connectionBroken: true
            )
        }
        reconnects.add(1, ordering: .relaxed)
        try configureSession(conn)
        for (key, shared) in advisoryLocks.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
            let function = shared ? "pg_try_advisory_lock_shared" : "pg_try_advisory_lock"
            let result = try execOnceLocked(conn, "SELECT \(function)($1)", [.int(key)])
            if result.first?[0] != "t" {
                _ = advisoryLocks.withLock { $0.removeValue(forKey: key) }
                throw PostgresError(
                    code: .advisoryLockLost,
                    message: "reconnected, but advisory lock \(key) is now held by another session",
                    statement: statement
                )
            }
        }
    }

    /// UTF-8, ISO dates in UTC and round-trippable floats, whatever the server defaults are.
    private func configureSession(_ conn: OpaquePointer) throws {
        guard PQsetClientEncoding(conn, "UTF8") == 0 else {
            throw PostgresError(code: .connection, message: "could not set client_encoding to UTF8")
        }
        _ = try execOnceLocked(
            conn,
            "SELECT set_config('DateStyle', 'ISO, MDY', false), set_config('TimeZone', 'UTC', false), "
                + "set_config('extra_float_digits', '3', false), set_config('bytea_output', 'hex', false)",
            []
        )
        // No JIT compilation: the planner's cost estimates of a few batch statements (a report's reads, an
        // upsert of a whole batch) cross its threshold, and compiling them cost more than running them
        // (docs/architecture.md, "Database work per subscription"). PostgreSQL 11 added the setting.
        if PQserverVersion(conn) >= 110_000 {
            _ = try execOnceLocked(conn, "SELECT set_config('jit', 'off', false)", [])
        }
    }

    func scrubbed(_ message: String) -> String {
        PostgresConnectionString.scrub(
            message.trimmingCharacters(in: .whitespacesAndNewlines),
            connectionString: connectionString
        )
    }

    func trackAdvisoryLock(_ key: Int64, held: Bool, shared: Bool = false) {
        advisoryLocks.withLock { locks in
            if held { locks[key] = shared } else { locks.removeValue(forKey: key) }
        }
    }

    static func isRollback(_ sql: String) -> Bool {
        let s = sql.trimmingCharacters(in: .whitespacesAndNewlines).uppercased()
        return (s.hasPrefix("ROLLBACK") && !s.hasPrefix("ROLLBACK TO")) || s.hasPrefix("ABORT")
    }

    static func isCommit(_ sql: String) -> Bool {
        let s = sql.trimmingCharacters(in: .whitespacesAndNewlines).uppercased()
        return s.hasPrefix("COMMIT") || s.hasPrefix("END")
    }
}

/// Holds the notice callback at a stable address for libpq's C callback context.
private final class NoticeBox: Sendable {
    let handler: (@Sendable (String) -> Void)?
    init(handler: (@Sendable (String) -> Void)?) { self.handler = handler }
}

extension PostgresResultStorage {
    static let empty = PostgresResultStorage(columnNames: [], typeOIDs: [], values: [])
}
