-- 001_initial.sql: subscriptions, the transaction ledger, reconciliation runs and their items.
--
-- Forward-only. Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/001_initial.sql
-- (`renewal-reconciler migrate` runs each pending file inside one transaction and records it in
-- schema_migrations; the INSERT at the end makes a plain psql run record itself the same way).

CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);

-- One row per auto-renewable subscription (per original_transaction_id), as the app stored it
-- at purchase time and as the reconciler last verified it with Apple.
CREATE TABLE subscriptions (
    id                       bigserial   PRIMARY KEY,
    user_id                  text        NOT NULL,
    bundle_id                text,
    product_id               text        NOT NULL,
    original_transaction_id  text        NOT NULL UNIQUE,
    environment              text        CHECK (environment IN ('Production', 'Sandbox')),
    latest_receipt           text        NOT NULL,            -- no length cap: receipts reach 300,000 chars
    expires_at               timestamptz,
    state                    text        CHECK (state IN ('active', 'grace_period', 'billing_retry', 'expired', 'revoked')),
    auto_renew               boolean,
    auto_renew_product_id    text,
    grace_period_expires_at  timestamptz,
    expiration_intent        integer,
    in_billing_retry         boolean,
    is_trial                 boolean,
    is_intro_offer           boolean,
    subscription_group_id    text,
    latest_transaction_id    text,
    revoked_at               timestamptz,
    cancellation_reason      integer,
    last_verified_at         timestamptz,
    -- What the last verification said: 'ok', 'rejected' (Apple or we refused the receipt for good),
    -- 'invalid_receipt' (21002 after the whole retry budget). Never changes entitlement by itself.
    last_verify_status       text        CHECK (last_verify_status IN ('ok', 'rejected', 'invalid_receipt')),
    last_apple_status        integer,
    last_error               text,
    -- Bumped by the trigger below on every UPDATE, whoever makes it (the app or the reconciler):
    -- the reconciler writes only `WHERE version = <the version it read>`, so newer data is never lost.
    version                  bigint      NOT NULL DEFAULT 1,
    created_at               timestamptz NOT NULL DEFAULT now(),
    updated_at               timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION subscriptions_bump_version() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.version := OLD.version + 1;
    NEW.updated_at := now();
    RETURN NEW;
END;
$$;

CREATE TRIGGER subscriptions_bump_version
    BEFORE UPDATE ON subscriptions
    FOR EACH ROW EXECUTE FUNCTION subscriptions_bump_version();

-- The nightly "due" scan is a range on expires_at over rows that are not revoked, read in keyset
-- pages of (expires_at, id). This partial index makes it an index range scan; with 100,000 rows:
--   EXPLAIN SELECT id FROM subscriptions
--    WHERE state IS DISTINCT FROM 'revoked' AND expires_at >= $1 AND expires_at <= $2
--      AND (expires_at, id) > ($3, $4) ORDER BY expires_at, id LIMIT 1000;
--   Limit -> Index Scan using subscriptions_due_idx on subscriptions
--              Index Cond: ((expires_at >= $1) AND (expires_at <= $2) AND (ROW(expires_at, id) > ROW($3, $4)))
-- (asserted by a test in Tests/ReconcilerTests).
CREATE INDEX subscriptions_due_idx ON subscriptions (expires_at, id)
    WHERE state IS DISTINCT FROM 'revoked';
-- Rows never verified (fresh imports, new purchases) are always due, whatever their stored expiry:
-- the stored expiry of a stale receipt can be years old while Apple renewed it silently since.
CREATE INDEX subscriptions_unverified_idx ON subscriptions (id) WHERE last_verified_at IS NULL;
CREATE INDEX subscriptions_user_idx ON subscriptions (user_id);
CREATE INDEX subscriptions_product_idx ON subscriptions (product_id);

-- A run of the reconciler: nightly, backfill or demo. Status moves running -> completed | partial |
-- failed; a run whose process died is found 'running' with no lock holder and marked 'interrupted'.
CREATE TABLE reconciliation_runs (
    id                bigserial   PRIMARY KEY,
    mode              text        NOT NULL CHECK (mode IN ('nightly', 'backfill', 'demo')),
    dry_run           boolean     NOT NULL DEFAULT false,
    status            text        NOT NULL CHECK (status IN ('running', 'completed', 'partial', 'failed', 'interrupted')),
    as_of             timestamptz NOT NULL,
    parameters        jsonb       NOT NULL DEFAULT '{}'::jsonb,
    started_at        timestamptz NOT NULL DEFAULT now(),
    heartbeat_at      timestamptz NOT NULL DEFAULT now(),
    finished_at       timestamptz,
    hostname          text,
    pid               integer,
    -- Keyset cursor of the selection scan: items are materialised page by page and the cursor is
    -- committed with each page, so a run killed mid-scan resumes the scan where it stopped.
    scan_cursor       jsonb,
    scan_completed    boolean     NOT NULL DEFAULT false,
    due_count         integer     NOT NULL DEFAULT 0,
    done_count        integer     NOT NULL DEFAULT 0,
    unresolved_count  integer     NOT NULL DEFAULT 0,
    resume_count      integer     NOT NULL DEFAULT 0,
    apple_stats       jsonb       NOT NULL DEFAULT '{}'::jsonb,  -- requests by status, retries, rate
    exit_code         integer,
    error             text
);
CREATE INDEX reconciliation_runs_status_idx ON reconciliation_runs (status, id);

-- One row per subscription selected by a run. Written 'pending' by the scan; each finished item is
-- updated to 'done' in the same transaction as the subscription and ledger writes it caused.
CREATE TABLE reconciliation_items (
    run_id                   bigint      NOT NULL REFERENCES reconciliation_runs (id) ON DELETE CASCADE,
    subscription_id          bigint      NOT NULL,
    original_transaction_id  text        NOT NULL,
    status                   text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done')),
    outcome                  text        CHECK (outcome IN ('renewed', 'unchanged', 'lapsed', 'recovered', 'revoked',
                                                            'changed', 'rejected', 'unresolved', 'conflict')),
    user_id                  text,
    previous_state           text,
    new_state                text,
    previous_expires_at      timestamptz,
    new_expires_at           timestamptz,
    previous_product_id      text,
    product_id               text,
    subscription_group_id    text,
    auto_renew               boolean,
    previous_auto_renew      boolean,
    auto_renew_product_id    text,
    environment              text,
    apple_status             integer,
    attempts                 integer     NOT NULL DEFAULT 0,
    reason                   text,
    expiry_moved_backwards   boolean     NOT NULL DEFAULT false,
    finished_at              timestamptz,
    PRIMARY KEY (run_id, subscription_id)
);
CREATE INDEX reconciliation_items_pending_idx ON reconciliation_items (run_id, subscription_id)
    WHERE status = 'pending';

-- The transaction ledger: one row per Apple transaction_id, inserted idempotently
-- (INSERT ... ON CONFLICT (transaction_id) DO ...). A refund seen later updates the same row.
CREATE TABLE subscription_transactions (
    transaction_id           text        PRIMARY KEY,
    original_transaction_id  text        NOT NULL,
    product_id               text        NOT NULL,
    subscription_group_id    text,
    web_order_line_item_id   text,
    kind                     text        NOT NULL CHECK (kind IN ('initial', 'renewal', 'upgrade', 'refund')),
    purchase_date            timestamptz,
    original_purchase_date   timestamptz,
    expires_date             timestamptz,
    is_trial                 boolean     NOT NULL DEFAULT false,
    is_intro_offer           boolean     NOT NULL DEFAULT false,
    offer                    text,
    ownership_type           text,
    is_upgraded              boolean     NOT NULL DEFAULT false,
    cancellation_date        timestamptz,
    cancellation_reason      integer,
    environment              text,
    first_seen_run_id        bigint      REFERENCES reconciliation_runs (id) ON DELETE SET NULL,
    refund_seen_run_id       bigint      REFERENCES reconciliation_runs (id) ON DELETE SET NULL,
    first_seen_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX subscription_transactions_otid_idx ON subscription_transactions (original_transaction_id);
CREATE INDEX subscription_transactions_first_seen_idx ON subscription_transactions (first_seen_run_id);
CREATE INDEX subscription_transactions_refund_seen_idx ON subscription_transactions (refund_seen_run_id)
    WHERE refund_seen_run_id IS NOT NULL;

INSERT INTO schema_migrations (version, name) VALUES (1, 'initial') ON CONFLICT (version) DO NOTHING;
