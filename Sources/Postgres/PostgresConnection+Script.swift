import CLibpq

extension PostgresConnection {
    /// Runs a script of several statements with no parameters (the simple query protocol), e.g. a
    /// migration file. Only for trusted SQL shipped with the program: data always goes through
    /// `execute(_:_:)` with parameters. Statements run in the current transaction if one is open;
    /// the first failing statement stops the script and throws with its SQLSTATE.
    public func executeScript(_ sql: String) throws {
        _ = try withExclusiveUse {
            let (conn, handled) = try readyHandleLocked(for: sql)
            if let handled { return handled }
            let result = PQexec(conn, sql)
            defer { noteTransactionStatus(conn) }
            return try consumeResult(conn, result, statement: String(sql.prefix(200)))
        }
    }
}
