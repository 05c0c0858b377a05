-- 005_rejected_recheck.sql: rejected subscriptions are asked again on a widening schedule, not every night.
--
-- Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/005_rejected_recheck.sql
--
-- A receipt Apple refused (21003, another app's receipt, 21002 through the whole retry budget, a signed
-- answer that does not verify, ...) gets the same answer tomorrow. Asking every night costs requests and
-- changes nothing, so a rejected row rests: after its n-th rejection in a row it is skipped for the n-th
-- step of the run's --recheck-rejected list (default 1d,2d,4d,8d,16d,30d; the last step repeats) beyond
-- --min-recheck. It is due at once when the app changed the row since the reconciler last wrote it
-- (`version IS DISTINCT FROM verified_version`, as for revoked rows, see 003). See docs/architecture.md.

-- rejected_count: consecutive rejections (last_verify_status 'rejected' or 'invalid_receipt'), written by
-- the reconciler's rejection update, NULL again after a decision. next_check_at: before this instant the
-- nightly scan leaves the row out (unless the app changed it). NULL: no schedule (never rejected, decided
-- since, or rejected before this migration): the row is due as before.
ALTER TABLE subscriptions
    ADD COLUMN rejected_count integer,
    ADD COLUMN next_check_at  timestamptz;

-- The nightly scan applies the schedule as a filter inside its existing index scans (subscriptions_due_idx,
-- subscriptions_revoked_idx): no new index for the selection itself. The run counts the rows it left out
-- this way when its scan completes (the report's "not due (rejected, next check on DATE)"):
--   EXPLAIN SELECT count(*), min(next_check_at) FROM subscriptions s
--    WHERE next_check_at > $1 AND version IS NOT DISTINCT FROM verified_version AND (...the due predicates...)
--      AND NOT EXISTS (SELECT 1 FROM reconciliation_items i WHERE i.run_id = $2 AND i.subscription_id = s.id);
--   Aggregate -> ... Index Scan using subscriptions_next_check_idx on subscriptions s
--                       Index Cond: (next_check_at > $1)
-- (asserted by a test in Tests/ReconcilerTests). Rejected rows are a small share of the table.
CREATE INDEX subscriptions_next_check_idx ON subscriptions (next_check_at) WHERE next_check_at IS NOT NULL;

-- What the run's scan left out because of the schedule: how many rows, and the earliest next check among
-- them. NULL: not a nightly run, or a run from before this migration.
ALTER TABLE reconciliation_runs
    ADD COLUMN not_due_rejected_count bigint,
    ADD COLUMN not_due_rejected_next  timestamptz;

INSERT INTO schema_migrations (version, name) VALUES (5, 'rejected_recheck') ON CONFLICT (version) DO NOTHING;
