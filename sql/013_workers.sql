-- 013_workers.sql: several worker processes on one run (docs/architecture.md, "Workers").
--
-- Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/013_workers.sql
--
-- `run --worker` joins the running worker run (or starts it): each worker registers here with a heartbeat,
-- claims pending items in batches (FOR UPDATE SKIP LOCKED), each leased to it until `lease_until`, and writes a
-- result only while the item is still pending and leased to it. A worker that dies stops heartbeating: its
-- leases run out and the others take its items; each app's rate limit is divided among the live workers.
CREATE TABLE run_workers (
    run_id        bigint      NOT NULL REFERENCES reconciliation_runs (id) ON DELETE CASCADE,
    worker_id     text        NOT NULL,                 -- hostname:pid:random
    hostname      text,
    pid           integer,
    started_at    timestamptz NOT NULL DEFAULT now(),
    heartbeat_at  timestamptz NOT NULL DEFAULT now(),
    stopped_at    timestamptz,                          -- set when the worker leaves on its own
    share         double precision,                     -- its part of each app's rate limit when it last looked
    written       integer     NOT NULL DEFAULT 0,       -- results this worker wrote
    apple_stats   jsonb,                                -- its requests (summed into the run's when it completes)
    PRIMARY KEY (run_id, worker_id)
);

-- Nullable, no default: no rewrite of the items. Claims read the pending items through
-- reconciliation_items_pending_idx (run_id, subscription_id) WHERE status = 'pending' and filter on the lease.
ALTER TABLE reconciliation_items ADD COLUMN leased_by text, ADD COLUMN lease_until timestamptz;

INSERT INTO schema_migrations (version, name) VALUES (13, 'workers') ON CONFLICT (version) DO NOTHING;
