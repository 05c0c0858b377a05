-- 015: what Apple's 2025-2026 data needs kept (docs/signed-data.md, section 1; docs/reports.md).
--
-- A dry run's would-be ledger rows keep their ownership type, so its report counts money as the real run's does: a
-- family member's share of another person's purchase (FAMILY_SHARED) is never money.
ALTER TABLE dry_run_transactions ADD COLUMN ownership_type text;

-- The product a notification is about: its transaction's, or for a mass renewal-date extension (RENEWAL_EXTENSION,
-- a `summary`) the extended product, whose entitled subscriptions the run then makes due.
ALTER TABLE app_store_notifications ADD COLUMN product_id text;

-- What the ledger keeps of each signed transaction (App Store Server API 1.15 to 1.21): the app's own id for the
-- customer and Apple's app transaction id (the links support and the app's other systems ask for), the offer's
-- identifier and period, and the billing plan.
ALTER TABLE subscription_transactions
    ADD COLUMN app_account_token  text,
    ADD COLUMN app_transaction_id text,
    ADD COLUMN offer_identifier   text,
    ADD COLUMN offer_period       text,
    ADD COLUMN billing_plan_type  text;

INSERT INTO schema_migrations (version, name) VALUES (15, 'apple_2026_data') ON CONFLICT (version) DO NOTHING;
