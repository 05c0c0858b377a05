-- 020_item_retention.sql: reconciliation_items is kept for a retention (docs/operations.md, "Retention").
--
-- Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/020_item_retention.sql
--
-- `renewal-reconciler prune` and every completed nightly run delete the items of finished runs older than
-- `--item-retention-days` (default 90), except each subscription's newest decided item among them (what a trend
-- snapshot and its rebuild read for a subscription not decided since). The run rows stay; this column says when a
-- run's items were pruned, so a listing or report of that run says its items are incomplete.
ALTER TABLE reconciliation_runs ADD COLUMN items_pruned_at timestamptz;

INSERT INTO schema_migrations (version, name) VALUES (20, 'item_retention') ON CONFLICT (version) DO NOTHING;
