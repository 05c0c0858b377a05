-- 017: each decided item keeps the next renewal's price and currency as Apple's renewal info said them that night
-- (docs/reports.md, "Trends across nights": MRR is a subscription's next renewal price where Apple states one), so
-- a day's trend snapshot, and its rebuild, value each side of the day as it was decided then.
ALTER TABLE reconciliation_items
    ADD COLUMN renewal_price_milliunits bigint,
    ADD COLUMN renewal_currency         text;

INSERT INTO schema_migrations (version, name) VALUES (17, 'item_renewal_price') ON CONFLICT (version) DO NOTHING;
