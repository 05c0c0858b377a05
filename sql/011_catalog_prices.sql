-- 011_catalog_prices.sql: what the products catalog needs to price a verifyReceipt transaction exactly.
--
-- Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/011_catalog_prices.sql
--
-- verifyReceipt carries no price, currency or storefront. The app knows the customer's currency at purchase
-- (StoreKit's `Transaction.currency`, or the product's `priceFormatStyle.currencyCode`) and may store it here;
-- the reports then price the subscription's transactions with the catalog row of that currency. The catalog
-- gains the price of the pay-as-you-go introductory offer (verifyReceipt flags `is_in_intro_offer_period`).
-- How catalog money is computed and ties out: docs/reports.md ("Money from the catalog").

-- ISO 4217, as the app stored it; NULL = unknown. NOT VALID: every existing row is NULL, so the table is not
-- scanned under its lock; new and updated rows are checked.
ALTER TABLE subscriptions ADD COLUMN currency text;
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_currency_check CHECK (currency ~ '^[A-Z]{3}$') NOT VALID;

-- Customer price per period of the product's pay-as-you-go introductory offer in `currency`; NULL = none known
-- (an intro-offer transaction of the product is then reported unpriced, never valued at the list price).
ALTER TABLE products ADD COLUMN intro_price numeric(12,4) CHECK (intro_price >= 0);

INSERT INTO schema_migrations (version, name) VALUES (11, 'catalog_prices') ON CONFLICT (version) DO NOTHING;
