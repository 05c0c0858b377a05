-- 024_subscription_events.sql: the outbox of subscription changes for the app's other systems (docs/events.md).
--
-- Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/024_subscription_events.sql
--
-- One row per transition of a subscription (a renewal, auto-renew turned off, a billing issue, an expiration, a
-- refund, ...), written in the same transaction as the change of the `subscriptions` row it describes: an event
-- exists exactly when its change was committed. A re-run or a resumed run finds the row already changed and writes
-- nothing again; a dry run writes no event. `id` is the event's id (the webhook's id); `sequence` counts a
-- subscription's events from 1, in the order they happened, so a receiver can apply them in order.
CREATE TABLE subscription_events (
    id                       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    subscription_id          bigint NOT NULL,         -- subscriptions.id (kept when the app deletes the row)
    sequence                 integer NOT NULL CHECK (sequence >= 1),
    kind                     text NOT NULL CHECK (kind IN (
                                 'purchase', 'renewal', 'auto_renew_off', 'auto_renew_on', 'billing_issue',
                                 'grace_period', 'recovery', 'expiration', 'product_change', 'refund',
                                 'refund_reversed', 'revocation', 'price_increase_consent', 'extension')),
    original_transaction_id  text NOT NULL,
    user_id                  text,
    app_account_token        text,
    bundle_id                text,
    environment              text,
    before                   jsonb NOT NULL,          -- state, expires_at, product_id, auto_renew before
    after                    jsonb NOT NULL,          -- and after the change
    reason                   text,                    -- an expiration's or refund's reason, as docs/events.md names it
    transaction_id           text,                    -- Apple's transaction behind the change, when there is one
    price_milliunits         bigint,                  -- its price, when known
    currency                 text,
    occurred_at              timestamptz,             -- when it happened at Apple, when known
    seen_at                  timestamptz NOT NULL,    -- when the reconciler found it
    source                   text NOT NULL CHECK (source IN ('run', 'notification', 'backfill')),
    run_id                   bigint,                  -- the run that found it
    created_at               timestamptz NOT NULL DEFAULT now(),
    -- Delivery by webhook (`renewal-reconciler events deliver`, docs/events.md "Delivery"): pending until the
    -- receiver answered 2xx, dead after the attempts allowed (replayed by `events replay`). A deliverer leases the
    -- events it sends (`lease_owner` until `lease_until`), so several on several hosts never send one at once.
    delivery_status          text NOT NULL DEFAULT 'pending' CHECK (delivery_status IN ('pending', 'delivered', 'dead')),
    delivery_attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at          timestamptz,
    lease_owner              text,
    lease_until              timestamptz,
    last_delivery_error      text,
    delivered_at             timestamptz,
    UNIQUE (subscription_id, sequence)
);
CREATE INDEX subscription_events_created_idx ON subscription_events (created_at);
-- The events not delivered yet: the deliverer's work, small however long the history.
CREATE INDEX subscription_events_undelivered_idx ON subscription_events (subscription_id, sequence)
    WHERE delivery_status <> 'delivered';

INSERT INTO schema_migrations (version, name) VALUES (24, 'subscription_events') ON CONFLICT (version) DO NOTHING;
