-- 012_apps.sql: several apps in one subscriptions table (docs/architecture.md, "Several apps").
--
-- Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/012_apps.sql
--
-- A run reconciles each row with the credentials and rate limit of the app its `bundle_id` names. A row whose
-- bundle id names no configured app ends `no_app`: Apple is not asked, the row is untouched and stays due, and
-- the reports count it apart; it is never a rejection (its receipt may be good for its own app).
ALTER TABLE reconciliation_items DROP CONSTRAINT reconciliation_items_outcome_check;
-- NOT VALID: every stored outcome already passed the old, narrower check, so no scan of the items is needed
-- (new and updated rows are checked).
ALTER TABLE reconciliation_items ADD CONSTRAINT reconciliation_items_outcome_check
    CHECK (outcome IN ('renewed', 'unchanged', 'lapsed', 'recovered', 'revoked', 'changed', 'rejected', 'unresolved',
                       'conflict', 'no_app')) NOT VALID;

INSERT INTO schema_migrations (version, name) VALUES (12, 'apps') ON CONFLICT (version) DO NOTHING;
