extension PostgresConnection {
    /// Runs `body` inside `BEGIN` ... `COMMIT`; any error thrown by `body` rolls back and is
    /// rethrown. Nested calls use savepoints, so an inner failure only undoes the inner work.
    ///
    /// If `body` swallowed a statement error, the server has aborted the transaction: it is
    /// then rolled back and `.transaction` is thrown rather than silently committing nothing.
    /// If the connection is lost, `.connectionLostInTransaction` is thrown: retry the whole call.
    public func transaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let depth = transactionDepth
        if depth == 0 {
            let alreadyOpen = try withExclusiveUse { isInTransactionLocked }
            if alreadyOpen {
                throw PostgresError(
                    code: .transaction,
                    message: "a transaction started with a plain BEGIN is open; finish it before calling transaction {}"
                )
            }
            try execute("BEGIN")
        } else {
            try execute("SAVEPOINT renewal_sp_\(depth)")
        }
        transactionDepth = depth + 1
        let value: T
        do {
            value = try body(self)
        } catch {
            transactionDepth = depth
            if depth == 0 {
                _ = try? execute("ROLLBACK")
            } else {
                _ = try? execute("ROLLBACK TO SAVEPOINT renewal_sp_\(depth)")
                _ = try? execute("RELEASE SAVEPOINT renewal_sp_\(depth)")
            }
            throw error
        }
        transactionDepth = depth
        let aborted = try withExclusiveUse { transactionIsAbortedLocked() }
        if aborted {
            if depth == 0 {
                _ = try? execute("ROLLBACK")
            } else {
                _ = try? execute("ROLLBACK TO SAVEPOINT renewal_sp_\(depth)")
                _ = try? execute("RELEASE SAVEPOINT renewal_sp_\(depth)")
            }
            throw PostgresError(
                code: .transaction,
                message: "a statement failed inside the transaction and the error was caught; the work was rolled back"
            )
        }
        if depth == 0 {
            do {
                try execute("COMMIT")
            } catch {
                // The connection died with the COMMIT (its outcome is unknown): the ROLLBACK is accepted locally and
                // clears the lost transaction, so the next statement reconnects instead of failing forever.
                _ = try? execute("ROLLBACK")
                throw error
            }
        } else {
            try execute("RELEASE SAVEPOINT renewal_sp_\(depth)")
        }
        return value
    }
}
