-- 015: a dry run's would-be ledger rows keep their ownership type, so its report counts money as the real run's
-- does: a family member's share of another person's purchase (FAMILY_SHARED) is never money (docs/reports.md,
-- "Money per currency").
ALTER TABLE dry_run_transactions ADD COLUMN ownership_type text;

INSERT INTO schema_migrations (version, name) VALUES (15, 'dry_run_ownership') ON CONFLICT (version) DO NOTHING;
