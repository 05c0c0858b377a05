-- 009_report_periods.sql: the period a run's report covers, fixed when the run starts.
--
-- Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/009_report_periods.sql
--
-- A run's money and transaction counts are by purchase or refund date within its period: after
-- period_start (the as-of of the previous completed, non-dry run of the same mode, period_previous_run_id;
-- or midnight UTC of the run's as-of when there is none) and at or before its as_of. Rows without these
-- values (runs from before this migration) get them computed the same way when their report is built.
-- See docs/reports.md ("The period").
ALTER TABLE reconciliation_runs
    ADD COLUMN period_start           timestamptz,
    ADD COLUMN period_previous_run_id bigint;

INSERT INTO schema_migrations (version, name) VALUES (9, 'report_periods') ON CONFLICT (version) DO NOTHING;
