extension PostgresConnection {
    /// Tries to take the session-level advisory lock `key` without waiting; true when taken.
    /// The connection remembers held keys and re-takes them after a reconnect (throwing
    /// `.advisoryLockLost` if another session took one meanwhile). Do not stack the same key.
    public func tryAdvisoryLock(key: Int64) throws -> Bool {
        let taken = try queryFirst("SELECT pg_try_advisory_lock($1) AS taken", [key])?.decode("taken", as: Bool.self)
        if taken == true { trackAdvisoryLock(key, held: true) }
        return taken == true
    }

    /// Releases the session-level advisory lock `key`; false when this session did not hold it.
    @discardableResult
    public func advisoryUnlock(key: Int64) throws -> Bool {
        trackAdvisoryLock(key, held: false)
        return try queryFirst("SELECT pg_advisory_unlock($1) AS released", [key])?.decode("released", as: Bool.self)
            ?? false
    }
}
