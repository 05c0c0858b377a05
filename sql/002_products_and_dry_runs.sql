-- 002_products_and_dry_runs.sql: an optional price catalog for the reports, and the transactions a
-- dry run would have added to the ledger (a dry run writes nothing to subscriptions or the ledger).
--
-- Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/002_products_and_dry_runs.sql

-- Optional: fill it to get estimated renewal revenue and refunded amounts in the reports.
-- verifyReceipt carries no prices, so without a row here a product's money figures are reported
-- as missing, never invented. One price per product and currency (e.g. per storefront).
CREATE TABLE products (
    product_id              text          NOT NULL,
    currency                text          NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),   -- ISO 4217
    price                   numeric(12,4) NOT NULL CHECK (price >= 0),                -- customer price per period
    period                  text          NOT NULL CHECK (period IN ('P1W', 'P1M', 'P2M', 'P3M', 'P6M', 'P1Y')),
    subscription_group_id   text,
    display_name            text,
    PRIMARY KEY (product_id, currency)
);

-- Ledger entries a dry run found but did not write (what transactions.csv of a dry run lists).
CREATE TABLE dry_run_transactions (
    run_id                   bigint      NOT NULL REFERENCES reconciliation_runs (id) ON DELETE CASCADE,
    transaction_id           text        NOT NULL,
    original_transaction_id  text        NOT NULL,
    product_id               text        NOT NULL,
    subscription_group_id    text,
    kind                     text        NOT NULL CHECK (kind IN ('initial', 'renewal', 'upgrade', 'refund')),
    purchase_date            timestamptz,
    expires_date             timestamptz,
    is_trial                 boolean     NOT NULL DEFAULT false,
    is_intro_offer           boolean     NOT NULL DEFAULT false,
    offer                    text,
    cancellation_date        timestamptz,
    cancellation_reason      integer,
    PRIMARY KEY (run_id, transaction_id)
);

INSERT INTO schema_migrations (version, name) VALUES (2, 'products_and_dry_runs') ON CONFLICT (version) DO NOTHING;
