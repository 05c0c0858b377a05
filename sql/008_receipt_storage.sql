-- 008_receipt_storage.sql: receipts and signed payloads are stored out of line without compression.
--
-- Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/008_receipt_storage.sql
--
-- A stored receipt is base64 of a signed PKCS#7 container (several KB, up to a few hundred), a signed
-- payload is a JWS (base64url of a certificate chain, a payload and a signature). PostgreSQL's default
-- for such a text column (STORAGE EXTENDED) runs pglz over every value over about 2 KB before moving
-- it to TOAST; pglz finds too few repeats in base64 to reach its 25% minimum for most of them, gives
-- up and stores the value as it was, so the work is wasted on nearly every write: measured at about
-- 130 us of PostgreSQL CPU per 8 KB receipt, half of the cost of a verified row's update
-- (docs/architecture.md, "Database work per subscription"). EXTERNAL keeps them out of line, unchanged.
-- Only the way new values are written changes: no table is rewritten and the values already stored
-- (compressed or not) stay readable as they are.
ALTER TABLE subscriptions
    ALTER COLUMN latest_receipt SET STORAGE EXTERNAL,
    ALTER COLUMN signed_transaction_info SET STORAGE EXTERNAL,
    ALTER COLUMN signed_renewal_info SET STORAGE EXTERNAL;
ALTER TABLE subscription_transactions ALTER COLUMN signed_transaction SET STORAGE EXTERNAL;

INSERT INTO schema_migrations (version, name) VALUES (8, 'receipt_storage') ON CONFLICT (version) DO NOTHING;
