-- 007_write_savings.sql: a nightly run writes only what changed.
--
-- Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/007_write_savings.sql
--
-- Most nights a subscription's receipt history is what it was: the same transactions, the same refunds.
-- Sending every ledger row again costs PostgreSQL an index probe and a row lock per transaction even
-- when the upsert changes nothing. The run stores a digest of the ledger it wrote (SHA-256 of every
-- field it writes, docs/architecture.md "Database work per subscription") and sends a subscription's
-- ledger rows only when the digest differs. NULL: unknown (rows from before this migration, or written
-- by the app): the next decision writes the ledger and the digest. To make a run write a subscription's
-- ledger again (after repairing subscription_transactions by hand), set its ledger_digest to NULL; a
-- backfill always writes the whole ledger.
ALTER TABLE subscriptions ADD COLUMN ledger_digest text;

INSERT INTO schema_migrations (version, name) VALUES (7, 'write_savings') ON CONFLICT (version) DO NOTHING;
