import CLibpq

extension PostgresConnection {
    /// Runs a query in libpq single-row mode and calls `body` for each row as it arrives, so a
    /// large result is never held in memory at once. `body` must not use this connection (that
    /// throws `.concurrentUse`). If `body` throws, the remaining rows are read and discarded and
    /// the error is rethrown. Not retried after a reconnect once rows may have been delivered;
    /// for resumable scans, page with keyset pagination (`WHERE id > $1 ORDER BY id LIMIT n`).
    /// - Returns: the number of rows delivered.
    @discardableResult
    public func forEachRow(
        _ sql: String,
        _ params: [(any PostgresEncodable)?] = [],
        _ body: (PostgresRow) throws -> Void
    ) throws -> Int {
        let values = params.map { $0?.postgresValue ?? .null }
        return try withExclusiveUse {
            let (conn, handled) = try readyHandleLocked(for: sql)
            if handled != nil { return 0 }
            let sent = try withParameters(values, statement: sql) { p in
                PQsendQueryParams(conn, sql, p.count, p.types, p.values, p.lengths, p.formats, 0)
            }
            guard sent == 1 else {
                let broken = PQstatus(conn) == CONNECTION_BAD
                noteTransactionStatus(conn)
                throw PostgresError(
                    code: .connection,
                    message: scrubbed(String(cString: PQerrorMessage(conn))),
                    statement: sql,
                    connectionBroken: broken
                )
            }
            _ = PQsetSingleRowMode(conn)
            var delivered = 0
            var bodyError: (any Error)?
            var serverError: PostgresError?
            var columns: PostgresColumns?
            while let result = PQgetResult(conn) {
                let status = PQresultStatus(result)
                if status == PGRES_SINGLE_TUPLE {
                    if bodyError == nil {
                        let single = Self.copyResult(result, columns: columns)
                        columns = single.storage.columns
                        PQclear(result)
                        let row = PostgresRow(storage: single.storage, index: 0, displayIndex: delivered)
                        delivered += 1
                        do { try body(row) } catch { bodyError = error }
                    } else {
                        PQclear(result)
                    }
                } else if status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK {
                    PQclear(result)
                } else {
                    if serverError == nil { serverError = error(from: result, conn: conn, statement: sql) }
                    PQclear(result)
                }
            }
            noteTransactionStatus(conn)
            if let bodyError { throw bodyError }
            if let serverError { throw serverError }
            return delivered
        }
    }
}
