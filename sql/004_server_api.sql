-- 004_server_api.sql: the App Store Server API as a second source, a priced ledger, notification history.
--
-- Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/004_server_api.sql
--
-- See docs/architecture.md ("The App Store Server API").

-- The newest signed transaction and renewal info (compact JWS, verified before they were stored), beside
-- latest_receipt; and how far the transaction history was read (the newest purchase date seen in Get
-- Transaction History), so later nights ask only for what is new. NULL: never read through the Server API.
ALTER TABLE subscriptions
    ADD COLUMN signed_transaction_info text,
    ADD COLUMN signed_renewal_info     text,
    ADD COLUMN history_through         timestamptz;

-- A priced ledger. Prices are milliunits of `currency` (9990 = 9.99, 1500000 = 1,500 yen), as Apple signs
-- them; revocation_percentage is milliunits of a percent (45000 = 45%). verifyReceipt rows keep these NULL
-- (the products catalog prices them). signed_transaction is the JWS the row was verified from.
ALTER TABLE subscription_transactions
    ADD COLUMN price_milliunits      bigint,
    ADD COLUMN currency              text CHECK (currency ~ '^[A-Z]{3}$'),
    ADD COLUMN storefront            text,
    ADD COLUMN offer_type            integer,
    ADD COLUMN offer_discount_type   text,
    ADD COLUMN revocation_date       timestamptz,
    ADD COLUMN revocation_reason     integer,
    ADD COLUMN revocation_type       text,
    ADD COLUMN revocation_percentage bigint CHECK (revocation_percentage BETWEEN 0 AND 100000),
    ADD COLUMN transaction_reason    text,
    ADD COLUMN signed_transaction    text;

ALTER TABLE dry_run_transactions
    ADD COLUMN price_milliunits      bigint,
    ADD COLUMN currency              text,
    ADD COLUMN storefront            text,
    ADD COLUMN revocation_type       text,
    ADD COLUMN revocation_percentage bigint;

-- Why an item is in its run: the expiry window, never verified, a revoked recheck, a backfill filter, or a
-- notification from Apple (which makes a subscription due whatever its expiry).
ALTER TABLE reconciliation_items ADD COLUMN due_reason text;

-- App Store Server Notifications, read from Get Notification History (or imported from an app's own
-- webhook store), each stored once: notification_uuid is Apple's key. original_transaction_id is NULL for
-- notifications about no subscription; subscription_known says whether the table had the subscription
-- when the notification was read (unknown ones are listed in the report, never inserted as rows).
CREATE TABLE app_store_notifications (
    notification_uuid        text        PRIMARY KEY,
    notification_type        text        NOT NULL,
    subtype                  text,
    environment              text,
    bundle_id                text,
    original_transaction_id  text,
    transaction_id           text,
    signed_date              timestamptz,
    signed_payload           text        NOT NULL,
    source                   text        NOT NULL CHECK (source IN ('history', 'import')),
    subscription_known       boolean     NOT NULL,
    first_seen_run_id        bigint      REFERENCES reconciliation_runs (id) ON DELETE SET NULL,
    received_at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX app_store_notifications_otid_idx ON app_store_notifications (original_transaction_id);
CREATE INDEX app_store_notifications_run_idx ON app_store_notifications (first_seen_run_id);

-- Where the last read of Get Notification History stopped, per app and environment. A read covers
-- [window_start, window_end); pagination_token is the next page of that window (NULL once read to the
-- end), committed with the page's notifications, so a killed run resumes on the next page and never
-- reads a page twice. completed_through is the window_end of the last window read to the end.
CREATE TABLE notification_cursors (
    bundle_id          text        NOT NULL,
    environment        text        NOT NULL CHECK (environment IN ('Production', 'Sandbox')),
    window_start       timestamptz,
    window_end         timestamptz,
    pagination_token   text,
    completed_through  timestamptz,
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (bundle_id, environment)
);

INSERT INTO schema_migrations (version, name) VALUES (4, 'server_api') ON CONFLICT (version) DO NOTHING;
