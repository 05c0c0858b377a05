-- 018_subscription_checks.sql: the reconciler's bookkeeping moves off the app's row into a table of its own.
--
-- Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/018_subscription_checks.sql
--
-- Until now every verification wrote its bookkeeping (last_verified_at, last_verify_status, ...) on the app's
-- `subscriptions` row, so every verified row was UPDATEd every night even when nothing the app reads changed:
-- a new row version, its `version` bumped (the app's optimistic concurrency saw a change that was none), and,
-- since last_verified_at is indexed for the scan, a non-HOT update writing every index of the table. The
-- bookkeeping now lives in `subscription_checks`, one row per subscription the reconciler has written (none for
-- a row it never verified), and the app's row is updated only when a column the app reads changes
-- (docs/architecture.md, "Database work per subscription").
--
-- verified_version keeps its meaning (sql/003_revoked_recheck.sql): the `version` the app's row has right after
-- the reconciler's write, the bumped one when it updated the row, the one it read when it left the row alone;
-- "the app changed the row since we verified it" is still `s.version IS DISTINCT FROM c.verified_version`
-- (no checks row: NULL, counts as changed, as before).
CREATE TABLE subscription_checks (
    subscription_id    bigint      PRIMARY KEY REFERENCES subscriptions (id) ON DELETE CASCADE,
    last_verified_at   timestamptz,
    -- What the last verification said (see 001): 'ok', 'rejected', 'invalid_receipt'.
    last_verify_status text        CHECK (last_verify_status IN ('ok', 'rejected', 'invalid_receipt')),
    last_apple_status  integer,
    last_error         text,
    rejected_count     integer,                -- see 005
    next_check_at      timestamptz,            -- see 005
    verified_version   bigint,                 -- see 003
    history_through    timestamptz,            -- see 004
    ledger_digest      text                    -- see 007
);

-- What the reconciler stored so far, for every row it ever wrote.
INSERT INTO subscription_checks (subscription_id, last_verified_at, last_verify_status, last_apple_status, last_error,
                                 rejected_count, next_check_at, verified_version, history_through, ledger_digest)
SELECT id, last_verified_at, last_verify_status, last_apple_status, last_error,
       rejected_count, next_check_at, verified_version, history_through, ledger_digest
  FROM subscriptions
 WHERE last_verified_at IS NOT NULL OR last_verify_status IS NOT NULL OR verified_version IS NOT NULL
    OR history_through IS NOT NULL OR ledger_digest IS NOT NULL OR next_check_at IS NOT NULL;

-- The sweep's keyset order (was subscriptions_sweep_idx, sql/006_sweep.sql). That index was partial on the app's
-- `state` (not revoked), which this table does not hold: revoked rows are now read through it and left out after
-- the probe of their subscription (a small share of the table). The scan reads it page by page:
--   EXPLAIN SELECT ... FROM subscription_checks c
--    CROSS JOIN LATERAL (SELECT * FROM subscriptions s WHERE s.id = c.subscription_id OFFSET 0) s
--    WHERE c.last_verified_at IS NOT NULL AND c.last_verified_at < $2
--      AND (c.last_verified_at, c.subscription_id) > ($3, $4) AND s.state IS DISTINCT FROM 'revoked' AND (...)
--    ORDER BY c.last_verified_at, c.subscription_id LIMIT $5;
--   Limit -> Nested Loop -> Index Scan using subscription_checks_sweep_idx on subscription_checks c
--                        -> Index Scan using subscriptions_pkey on subscriptions
-- (asserted by a test in Tests/ReconcilerTests).
CREATE INDEX subscription_checks_sweep_idx ON subscription_checks (last_verified_at, subscription_id)
    WHERE last_verified_at IS NOT NULL;
-- The rejected schedule (was subscriptions_next_check_idx, sql/005_rejected_recheck.sql): the run counts the rows
-- it left out for it through this index.
CREATE INDEX subscription_checks_next_check_idx ON subscription_checks (next_check_at) WHERE next_check_at IS NOT NULL;

-- Off the app's row. subscriptions_unverified_idx (001) has no replacement: a row never verified has no checks
-- row, so the scan's unverified phase reads subscriptions in id order (subscriptions_pkey) with one probe of
-- subscription_checks_pkey per row, the whole table once a night; the window and revoked phases keep their indexes
-- on subscriptions and probe each candidate's checks row the same way (docs/architecture.md, "Database work per
-- subscription").
DROP INDEX subscriptions_sweep_idx, subscriptions_unverified_idx, subscriptions_next_check_idx;
ALTER TABLE subscriptions
    DROP COLUMN last_verified_at,
    DROP COLUMN last_verify_status,
    DROP COLUMN last_apple_status,
    DROP COLUMN last_error,
    DROP COLUMN rejected_count,
    DROP COLUMN next_check_at,
    DROP COLUMN verified_version,
    DROP COLUMN history_through,
    DROP COLUMN ledger_digest;

-- For operators and dashboards that read these columns on the subscription row: one row per subscription with
-- its bookkeeping (NULLs for a row never verified), and whether the app changed the row since the reconciler
-- last wrote it. Read-only; the reconciler never reads it.
CREATE VIEW subscription_verification AS
SELECT s.id AS subscription_id, s.original_transaction_id, s.user_id, s.bundle_id, s.version,
       c.last_verified_at, c.last_verify_status, c.last_apple_status, c.last_error, c.rejected_count,
       c.next_check_at, c.verified_version, c.history_through, c.ledger_digest,
       s.version IS DISTINCT FROM c.verified_version AS changed_since_verified
  FROM subscriptions s
  LEFT JOIN subscription_checks c ON c.subscription_id = s.id;

INSERT INTO schema_migrations (version, name) VALUES (18, 'subscription_checks') ON CONFLICT (version) DO NOTHING;
