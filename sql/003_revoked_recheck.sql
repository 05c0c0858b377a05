-- 003_revoked_recheck.sql: revoked subscriptions are verified again.
--
-- Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/003_revoked_recheck.sql
--
-- A refund revokes a subscription, but the customer can buy again later: a revoked row must not be left
-- out of the nightly scan forever. It is due again when the app changed the row since the reconciler
-- last verified it (a new receipt, say), or when its last verification is older than the run's
-- --recheck-revoked interval (default 7 days).

-- The `version` the reconciler's own UPDATE produced. The trigger subscriptions_bump_version sets
-- NEW.version = OLD.version + 1 on every UPDATE, so the reconciler writes `verified_version = version + 1`
-- in the same statement; "the app changed the row since we verified it" is then
-- `version IS DISTINCT FROM verified_version`. NULL (rows verified before this migration, or never):
-- counts as changed, so every revoked row is verified once more on the first run after the migration.
ALTER TABLE subscriptions ADD COLUMN verified_version bigint;

-- The revoked phase of the nightly due scan reads revoked rows in keyset pages of id:
--   EXPLAIN SELECT id FROM subscriptions
--    WHERE state = 'revoked' AND id > $1
--      AND (version IS DISTINCT FROM verified_version OR last_verified_at IS NULL OR last_verified_at < $2)
--    ORDER BY id LIMIT 5000;
--   Limit -> Index Scan using subscriptions_revoked_idx on subscriptions
--              Index Cond: (id > $1)
-- (asserted by a test in Tests/ReconcilerTests). Revoked rows are a small share of the table, so the
-- filter runs over them alone.
CREATE INDEX subscriptions_revoked_idx ON subscriptions (id) WHERE state = 'revoked';

INSERT INTO schema_migrations (version, name) VALUES (3, 'revoked_recheck') ON CONFLICT (version) DO NOTHING;
