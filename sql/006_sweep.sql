-- 006_sweep.sql: the nightly sweep re-verifies the least recently verified subscriptions.
--
-- Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/006_sweep.sql
--
-- verifyReceipt sends no notifications, so a yearly subscription refunded or turned off mid-period would
-- wait months for its expiry window. Each nightly run therefore also takes about 1/--sweep-days of the
-- verified, non-revoked rows, least recently verified first (docs/architecture.md, "The sweep").

-- The sweep's keyset order. The scan reads it page by page:
--   EXPLAIN SELECT ... FROM subscriptions s
--    WHERE state IS DISTINCT FROM 'revoked' AND last_verified_at IS NOT NULL AND last_verified_at < $2
--      AND (last_verified_at, id) > ($3, $4) AND (...the rejected schedule...)
--      AND NOT EXISTS (SELECT 1 FROM reconciliation_items i WHERE i.run_id = $1 AND i.subscription_id = s.id)
--    ORDER BY last_verified_at, id LIMIT $5;
--   Limit -> Nested Loop Anti Join -> Index Scan using subscriptions_sweep_idx on subscriptions s
--                                      Index Cond: ((last_verified_at IS NOT NULL) AND (last_verified_at < $2) ...)
--                                  -> Index Only Scan using reconciliation_items_pkey on reconciliation_items i
-- (asserted by a test in Tests/ReconcilerTests). The eligible rows are counted once per run; most of the table
-- is eligible, so the planner reads the table for that count (tens of milliseconds per million rows).
CREATE INDEX subscriptions_sweep_idx ON subscriptions (last_verified_at, id) WHERE state IS DISTINCT FROM 'revoked';

-- What the run's sweep was planned to take: the eligible rows when it started and its quota,
-- ceil(eligible / --sweep-days). NULL: no sweep (a backfill, --sweep-days 0, or a run from before this
-- migration).
ALTER TABLE reconciliation_runs
    ADD COLUMN sweep_eligible_count bigint,
    ADD COLUMN sweep_quota          bigint;

INSERT INTO schema_migrations (version, name) VALUES (6, 'sweep') ON CONFLICT (version) DO NOTHING;
