-- 023_subscription_reports.sql: Apple's Subscription report and Subscription Event report (Sales and Trends,
-- SUBSCRIPTION and SUBSCRIPTION_EVENT, DAILY, SUMMARY, version 1_3), loaded by `renewal-reconciler apple-reports
-- import` and `download` beside the Subscriber report (docs/apple-reports.md).
--
-- Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/023_subscription_reports.sql
--
-- Each file is stored once and whole, as 021's reports are; for these two kinds also once a day: a second file of a
-- day already stored loads nothing (the partial unique index below). Apple's ids stay text; counts are integers.
ALTER TABLE apple_report_files DROP CONSTRAINT apple_report_files_kind_check;
ALTER TABLE apple_report_files ADD CONSTRAINT apple_report_files_kind_check
    CHECK (kind IN ('subscriber', 'financial', 'finance_detail', 'subscription_event', 'subscription'));
-- One Subscription report and one Subscription Event report per Pacific day (period_start is the day; the
-- Subscription report's comes from the request, the file name or --date: it has no date column).
CREATE UNIQUE INDEX apple_report_files_daily_summary_idx ON apple_report_files (kind, period_start)
    WHERE kind IN ('subscription_event', 'subscription');

-- The Subscription Event report: how many events of a kind happened on a Pacific day with the same fields.
CREATE TABLE apple_subscription_event_rows (
    file_id                         bigint NOT NULL REFERENCES apple_report_files (id),
    line                            integer NOT NULL,   -- the row's line in the file (1 is the header)
    event_date                      date NOT NULL,      -- Event Date: the Pacific-time day of the events
    event                           text NOT NULL,      -- Event: Subscribe, Renew, Cancel, Refund, ... as Apple writes it
    app_name                        text,               -- App Name
    app_apple_id                    text NOT NULL,      -- App Apple ID
    subscription_name               text,               -- Subscription Name
    subscription_apple_id           text NOT NULL,      -- Subscription Apple ID (not the product id)
    subscription_group_id           text,               -- Subscription Group ID
    standard_subscription_duration  text,               -- Standard Subscription Duration (7 Days, 1 Month, ...)
    subscription_offer_type         text,               -- Subscription Offer Type (Free Trial, Pay As You Go, ...)
    subscription_offer_duration     text,               -- Subscription Offer Duration
    marketing_opt_in                boolean NOT NULL,   -- Marketing Opt-In: Yes
    marketing_opt_in_duration       text,               -- Marketing Opt-In Duration
    preserved_pricing               boolean NOT NULL,   -- Preserved Pricing: Yes
    proceeds_reason                 text,               -- Proceeds Reason ("Rate After One Year")
    subscription_offer_name         text,               -- Subscription Offer Name (Promotional Offer Name)
    promotional_offer_id            text,               -- Promotional Offer ID
    consecutive_paid_periods        integer,            -- Consecutive Paid Periods
    original_start_date             date,               -- Original Start Date
    client                          text,               -- Client (News)
    device                          text,               -- Device (iPhone, iPad, ...)
    state                           text,               -- State (as the customer gave it; not validated by Apple)
    country                         text NOT NULL,      -- Country: two-letter code of the storefront
    previous_subscription_name      text,               -- Previous Subscription Name (upgrades, downgrades, ...)
    previous_subscription_apple_id  text,               -- Previous Subscription Apple ID
    days_before_canceling           integer,            -- Days Before Canceling
    cancellation_reason             text,               -- Cancellation Reason (Billing Issue, Price Increase, ...)
    days_canceled                   integer,            -- Days Canceled (reactivations)
    quantity                        integer NOT NULL,   -- Quantity: the number of such events
    PRIMARY KEY (file_id, line)
);
CREATE INDEX apple_subscription_event_rows_day_idx
    ON apple_subscription_event_rows (event_date, subscription_apple_id);

-- The Subscription report: subscriptions active at the end of the file's day (apple_report_files.period_start),
-- counted per subscription, offer, price and country. NULL count: the file's header lacks that column.
CREATE TABLE apple_subscription_rows (
    file_id                                  bigint NOT NULL REFERENCES apple_report_files (id),
    line                                     integer NOT NULL,  -- the row's line in the file
    app_name                                 text,              -- App Name
    app_apple_id                             text NOT NULL,     -- App Apple ID
    subscription_name                        text,              -- Subscription Name
    subscription_apple_id                    text NOT NULL,     -- Subscription Apple ID
    subscription_group_id                    text,              -- Subscription Group ID
    standard_subscription_duration           text,              -- Standard Subscription Duration
    subscription_offer_name                  text,              -- Subscription Offer Name
    promotional_offer_id                     text,              -- Promotional Offer ID
    customer_price_milliunits                bigint NOT NULL,   -- Customer Price
    customer_currency                        text NOT NULL,     -- Customer Currency (ISO 4217)
    developer_proceeds_milliunits            bigint NOT NULL,   -- Developer Proceeds (per subscription)
    proceeds_currency                        text NOT NULL,     -- Proceeds Currency (ISO 4217)
    preserved_pricing                        boolean NOT NULL,  -- Preserved Pricing: Yes
    proceeds_reason                          text,              -- Proceeds Reason
    client                                   text,              -- Client
    device                                   text,              -- Device
    state                                    text,              -- State
    country                                  text NOT NULL,     -- Country: two-letter code
    active_standard_price                    integer,           -- Active Standard Price Subscriptions
    active_free_trial_introductory_offer     integer,           -- Active Free Trial Introductory Offer Subscriptions
    active_pay_up_front_introductory_offer   integer,           -- Active Pay Up Front Introductory Offer Subscriptions
    active_pay_as_you_go_introductory_offer  integer,           -- Active Pay As You Go Introductory Offer Subscriptions
    free_trial_promotional_offer             integer,           -- Free Trial Promotional Offer Subscriptions
    pay_up_front_promotional_offer           integer,           -- Pay Up Front Promotional Offer Subscriptions
    pay_as_you_go_promotional_offer          integer,           -- Pay As You Go Promotional Offer Subscriptions
    free_trial_offer_code                    integer,           -- Free Trial Offer Code Subscriptions
    pay_up_front_offer_code                  integer,           -- Pay Up Front Offer Code Subscriptions
    pay_as_you_go_offer_code                 integer,           -- Pay As You Go Offer Code Subscriptions
    marketing_opt_ins                        integer,           -- Marketing Opt-Ins
    billing_retry                            integer,           -- Billing Retry
    grace_period                             integer,           -- Grace Period
    subscribers                              integer,           -- Subscribers
    free_trial_win_back                      integer,           -- Free Trial Win-Back Offers (after 1_3)
    pay_up_front_win_back                    integer,           -- Pay Up Front Win-Back Offers (after 1_3)
    pay_as_you_go_win_back                   integer,           -- Pay As You Go Win-Back Offers (after 1_3)
    PRIMARY KEY (file_id, line)
);

INSERT INTO schema_migrations (version, name) VALUES (23, 'subscription_reports') ON CONFLICT (version) DO NOTHING;
