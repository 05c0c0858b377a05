extension PostgresConnection {
    /// Tries to take the session-level advisory lock `key` without waiting; true when taken.
    /// The connection remembers held keys and re-takes them after a reconnect (throwing
    /// `.advisoryLockLost` if another session took one meanwhile). Do not stack the same key.
    public func tryAdvisoryLock(key: Int64) throws -> Bool {
        let taken = try queryFirst("SELECT pg_try_advisory_lock($1) AS taken", [key])?.decode("taken", as: Bool.self)
        if taken == true { trackAdvisoryLock(key, held: true) }
        return taken == true
    }

    /// Tries to take the session-level advisory lock `key` in shared mode without waiting (other shared holders
    /// are welcome, an exclusive holder is not); true when taken. Remembered and re-taken after a reconnect like
    /// `tryAdvisoryLock(key:)`.
    public func tryAdvisoryLockShared(key: Int64) throws -> Bool {
        let taken = try queryFirst("SELECT pg_try_advisory_lock_shared($1) AS taken", [key])?
            .decode("taken", as: Bool.self)
        if taken == true { trackAdvisoryLock(key, held: true, shared: true) }
        return taken == true
    }

    /// Releases the session-level advisory lock `key`; false when this session did not hold it.
    @discardableResult
    public func advisoryUnlock(key: Int64) throws -> Bool {
        let shared = heldSharedAdvisoryLocks.contains(key)
        trackAdvisoryLock(key, held: false)
        let function = shared ? "pg_advisory_unlock_shared" : "pg_advisory_unlock"
        return try queryFirst("SELECT \(function)($1) AS released", [key])?.decode("released", as: Bool.self)
            ?? false
    }
}
