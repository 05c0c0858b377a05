-- 022_product_apple_ids.sql: each product's Apple ID in the catalog, for the tie-out with Apple's reports
-- (docs/tie-out.md, "Products: the Apple ID map").
--
-- Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/022_product_apple_ids.sql
--
-- Apple's Subscriber report names a subscription by its Apple ID (`Subscription Apple ID`), never by the product id
-- the ledger holds. `renewal-reconciler products import` reads it from the catalog's optional `apple_id` column (the
-- same value on every currency row of a product); NULL: not given (the tie-out then learns it from the imported
-- Financial reports, which carry both).
ALTER TABLE products ADD COLUMN apple_id text CHECK (apple_id ~ '^[0-9]{1,20}$');

INSERT INTO schema_migrations (version, name) VALUES (22, 'product_apple_ids') ON CONFLICT (version) DO NOTHING;
