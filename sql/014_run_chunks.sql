-- 014_run_chunks.sql: workers lease ranges of a run's items, not each item (docs/architecture.md, "Workers").
--
-- Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/014_run_chunks.sql
--
-- Once a worker run's scan is complete, its pending items are divided into chunks of consecutive subscription
-- ids. A worker claims a whole chunk (FOR UPDATE SKIP LOCKED), leased to it until `lease_until`, and each batch
-- it writes locks its chunks' rows and takes the written items off `remaining`: the lease costs a statement per
-- chunk and per batch instead of two row writes per item. A chunk with nothing remaining is finished; one whose
-- lease ran out (its worker died) is claimed by another worker, which reads the chunk's items still pending.
CREATE TABLE run_chunks (
    run_id       bigint      NOT NULL REFERENCES reconciliation_runs (id) ON DELETE CASCADE,
    first_id     bigint      NOT NULL,   -- the chunk's items: subscription ids first_id..last_id of the run
    last_id      bigint      NOT NULL,
    remaining    integer     NOT NULL,   -- its items with no result written yet
    leased_by    text,                   -- run_workers.worker_id of the worker holding it
    lease_until  timestamptz,
    PRIMARY KEY (run_id, first_id),
    CHECK (first_id <= last_id AND remaining >= 0)
);

-- The per-item lease of 013 is replaced by the chunks' (metadata only: no rewrite of the items).
ALTER TABLE reconciliation_items DROP COLUMN leased_by, DROP COLUMN lease_until;

INSERT INTO schema_migrations (version, name) VALUES (14, 'run_chunks') ON CONFLICT (version) DO NOTHING;
