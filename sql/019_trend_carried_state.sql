-- 019_trend_carried_state.sql: the trend snapshot carries each subscription's decided state from night to night.
--
-- Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/019_trend_carried_state.sql
--
-- Until now a night's snapshot read every decided item of every run kept (sql/010_trend_snapshots.sql), so its cost
-- grew with the history. The night now reads this table (one row per subscription ever decided: its newest decided
-- item among the folded runs) plus the items of the runs not folded yet, its own night's among them; the runs of
-- the previous day are folded in first. `report --trends --rebuild` still reads the whole history and gives the
-- same rows (docs/reports.md, "Trends across nights").
--
-- A cache of reconciliation_items: the snapshot empties it when it holds a run newer than the day it needs
-- (a day recorded out of order) and folds it again from the items, so nothing here is the only copy of anything.
CREATE TABLE trend_subscription_state (
    subscription_id          bigint      PRIMARY KEY,
    run_id                   bigint      NOT NULL,                  -- the item's run
    run_as_of                timestamptz NOT NULL,                  -- that run's as-of: the newest wins
    original_transaction_id  text        NOT NULL,
    state                    text        NOT NULL,                  -- the item's new_state
    product_id               text,                                  -- product_id, else previous_product_id
    auto_renew               boolean,
    auto_renew_product_id    text,
    environment              text,
    renewal_price_milliunits bigint,
    renewal_currency         text
);

-- The runs folded into trend_subscription_state, with the status each had then: a run folded while 'running' or
-- 'interrupted' is folded again once its status changes (a resumed run gains items; folding is a merge that
-- keeps each subscription's newest item, so folding twice changes nothing).
CREATE TABLE trend_folded_runs (
    run_id     bigint      PRIMARY KEY REFERENCES reconciliation_runs (id) ON DELETE CASCADE,
    run_as_of  timestamptz NOT NULL,
    status     text        NOT NULL,
    folded_at  timestamptz NOT NULL DEFAULT now()
);

INSERT INTO schema_migrations (version, name) VALUES (19, 'trend_carried_state') ON CONFLICT (version) DO NOTHING;
