-- 010_trend_snapshots.sql: one snapshot a day of subscriptions and MRR, for trends across nights.
--
-- Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/010_trend_snapshots.sql
--
-- Every completed, non-dry run replaces the rows of its snapshot date (its as-of's calendar day, UTC), one
-- row per app, product and currency; `report --trends --rebuild` recomputes them from the runs, their items
-- and the ledger. Every figure, its source and what a rebuild can recompute: docs/reports.md ("Trends across nights").
CREATE TABLE trend_snapshots (
    snapshot_date              date        NOT NULL,
    bundle_id                  text        NOT NULL,                -- 'app' when the subscription has none
    product_id                 text        NOT NULL,
    currency                   text        NOT NULL,                -- '' = unpriced (no usable price)
    run_id                     bigint      REFERENCES reconciliation_runs (id) ON DELETE SET NULL,
    as_of                      timestamptz NOT NULL,
    previous_as_of             timestamptz NOT NULL,
    active                     integer     NOT NULL,
    grace_period               integer     NOT NULL,
    billing_retry              integer     NOT NULL,
    in_trial                   integer     NOT NULL,
    in_intro_offer             integer     NOT NULL,
    new_subscriptions          integer     NOT NULL,
    renewed                    integer     NOT NULL,
    lapsed                     integer     NOT NULL,
    churned                    integer     NOT NULL,
    refunded                   integer     NOT NULL,
    reactivated                integer     NOT NULL,
    trial_conversions          integer     NOT NULL,
    mrr_subscriptions          integer     NOT NULL,
    -- Milliunits of `currency`, rounded to its minor unit; NULL for the unpriced row ('').
    mrr_milliunits             bigint,
    mrr_new_milliunits         bigint,
    mrr_expansion_milliunits   bigint,
    mrr_contraction_milliunits bigint,
    mrr_churn_milliunits       bigint,
    mrr_source                 text        NOT NULL,                -- 'ledger', 'catalog', 'ledger+catalog', ''
    recorded_by                text        NOT NULL CHECK (recorded_by IN ('run', 'rebuild')),
    recorded_at                timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (snapshot_date, bundle_id, product_id, currency)
);

-- No new index: the snapshot statement reads every decided item of the non-dry runs up to its as-of once
-- (one pass, hashed and sorted per subscription) and the ledger by original_transaction_id
-- (subscription_transactions_otid_idx); an index on items would slow every night's item writes instead.
-- Its plan and cost: docs/reports.md ("Trends across nights").

INSERT INTO schema_migrations (version, name) VALUES (10, 'trend_snapshots') ON CONFLICT (version) DO NOTHING;
