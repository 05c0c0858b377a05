-- 016: what a subscription's row keeps beside its entitlement (docs/decision-rules.md, "What the row keeps beside
-- the entitlement"; docs/reports.md).
--
-- The app's own id for the customer (set at purchase, accepted by `import`) and Apple's app transaction id: the
-- links between Apple's data and the app's users. The customer's answer to a price increase, and the next
-- renewal's price, currency and billing plan, as Apple's latest renewal info says them.
ALTER TABLE subscriptions
    ADD COLUMN app_account_token         text,
    ADD COLUMN app_transaction_id        text,
    ADD COLUMN price_increase_status     integer,
    ADD COLUMN renewal_price_milliunits  bigint,
    ADD COLUMN renewal_currency          text,
    ADD COLUMN renewal_billing_plan_type text;

-- Each item keeps why the subscription ended and the price-increase answer as the run decided them, so a night's
-- report counts churn by reason and consent as they were that night.
ALTER TABLE reconciliation_items
    ADD COLUMN expiration_intent     integer,
    ADD COLUMN price_increase_status integer;

-- One-time purchases (consumables, non-consumables, non-renewing subscriptions: Apple's ONE_TIME_CHARGE) join the
-- ledger as kind 'one_time', read from the notifications that carry them: money, never a subscription row.
ALTER TABLE subscription_transactions DROP CONSTRAINT subscription_transactions_kind_check,
    ADD CONSTRAINT subscription_transactions_kind_check
        CHECK (kind IN ('initial', 'renewal', 'upgrade', 'refund', 'one_time'));
ALTER TABLE dry_run_transactions DROP CONSTRAINT dry_run_transactions_kind_check,
    ADD CONSTRAINT dry_run_transactions_kind_check
        CHECK (kind IN ('initial', 'renewal', 'upgrade', 'refund', 'one_time'));

-- A dry run's would-be ledger rows keep the signed offer type too (the offer mix of its report).
ALTER TABLE dry_run_transactions ADD COLUMN offer_type integer;

INSERT INTO schema_migrations (version, name) VALUES (16, 'customer_facts') ON CONFLICT (version) DO NOTHING;
