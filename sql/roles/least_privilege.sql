-- sql/roles/least_privilege.sql: example roles for running renewal-reconciler with least privilege.
-- Not a migration (it lives outside sql/*.sql, so `migrate` never runs it). Run it once as a superuser
-- or the schema owner, after `migrate`, adapting names and the password handling:
--
--   psql -v ON_ERROR_STOP=1 -f sql/roles/least_privilege.sql
--
-- Three roles:
--   renewal_owner       owns the schema; only `renewal-reconciler migrate` runs as it (deploy time).
--   renewal_reconciler  the nightly job: reads and updates subscriptions, writes its own tables;
--                       cannot create, drop or alter anything, cannot delete subscriptions.
--   renewal_reader      finance / dashboards: read-only on runs, items, ledger and products;
--                       no access to subscriptions.latest_receipt.

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'renewal_reconciler') THEN
        CREATE ROLE renewal_reconciler LOGIN;   -- set a password with \password, or use cert/peer auth
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'renewal_reader') THEN
        CREATE ROLE renewal_reader LOGIN;
    END IF;
END
$$;

REVOKE ALL ON ALL TABLES IN SCHEMA public FROM renewal_reconciler, renewal_reader;

-- The nightly job (run, backfill, import, report, runs).
GRANT USAGE ON SCHEMA public TO renewal_reconciler;
GRANT SELECT, INSERT, UPDATE ON subscriptions TO renewal_reconciler;          -- import inserts, runs update
GRANT SELECT, INSERT, UPDATE ON subscription_checks TO renewal_reconciler;    -- its bookkeeping (018)
GRANT USAGE ON SEQUENCE subscriptions_id_seq TO renewal_reconciler;
GRANT SELECT, INSERT, UPDATE ON subscription_transactions TO renewal_reconciler;
GRANT SELECT, INSERT, UPDATE ON reconciliation_runs, reconciliation_items, dry_run_transactions TO renewal_reconciler;
GRANT USAGE ON SEQUENCE reconciliation_runs_id_seq TO renewal_reconciler;
GRANT SELECT ON schema_migrations TO renewal_reconciler;
GRANT SELECT, INSERT, DELETE ON products TO renewal_reconciler;                -- `products import` replaces the catalog
GRANT SELECT, INSERT, UPDATE ON app_store_notifications, notification_cursors TO renewal_reconciler;
GRANT SELECT, INSERT, DELETE ON trend_snapshots TO renewal_reconciler;       -- a night replaces its day's rows
GRANT SELECT, INSERT, UPDATE, DELETE ON trend_subscription_state, trend_folded_runs
    TO renewal_reconciler;                                                    -- the trends' carried state (019)
GRANT DELETE ON reconciliation_items TO renewal_reconciler;                   -- the items' retention (020)
GRANT SELECT, INSERT, UPDATE ON run_workers TO renewal_reconciler;            -- `run --worker` registers and beats
GRANT SELECT, INSERT, UPDATE ON run_chunks TO renewal_reconciler;             -- and leases chunks of items
GRANT SELECT, INSERT ON apple_report_files, apple_subscriber_events, apple_financial_rows, apple_finance_detail_rows
    TO renewal_reconciler;                                                    -- `apple-reports import` (021)
GRANT USAGE ON SEQUENCE apple_report_files_id_seq TO renewal_reconciler;
GRANT SELECT, INSERT ON apple_subscription_event_rows, apple_subscription_rows
    TO renewal_reconciler;                                                    -- the Subscription (Event) reports (023)
GRANT SELECT, INSERT ON subscription_events TO renewal_reconciler;           -- the outbox, written with each change (024)
GRANT UPDATE (delivery_status, delivery_attempts, next_attempt_at, lease_owner, lease_until, last_delivery_error,
              delivered_at) ON subscription_events TO renewal_reconciler;  -- `events deliver` and `events replay`

-- Finance and dashboards: the facts, never the receipts.
GRANT USAGE ON SCHEMA public TO renewal_reader;
GRANT SELECT ON reconciliation_runs, reconciliation_items, subscription_transactions, dry_run_transactions,
                products, trend_snapshots, run_workers, run_chunks TO renewal_reader;
GRANT SELECT ON apple_report_files, apple_subscriber_events, apple_financial_rows, apple_finance_detail_rows
    TO renewal_reader;                                                        -- Apple's own reports (021)
GRANT SELECT ON apple_subscription_event_rows, apple_subscription_rows
    TO renewal_reader;                                                        -- the Subscription (Event) reports (023)
GRANT SELECT ON schema_migrations TO renewal_reader;                          -- `tie-out` checks the schema
GRANT SELECT (notification_type, transaction_id, signed_date) ON app_store_notifications
    TO renewal_reader;                                                        -- `tie-out`: refunds Apple reversed
GRANT SELECT (id, user_id, bundle_id, product_id, original_transaction_id, environment, expires_at, state,
              auto_renew, auto_renew_product_id, grace_period_expires_at, updated_at, currency)
    ON subscriptions TO renewal_reader;
GRANT SELECT ON subscription_events TO renewal_reader;                       -- what changed, for exports (024)
GRANT SELECT ON subscription_checks, subscription_verification TO renewal_reader; -- when each row was verified (018)
