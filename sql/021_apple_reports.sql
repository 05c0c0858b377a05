-- 021_apple_reports.sql: Apple's own App Store Connect reports, loaded from disk by `renewal-reconciler apple-reports
-- import` (docs/apple-reports.md), beside the ledger they will be tied out with.
--
-- Runnable on its own with:  psql -v ON_ERROR_STOP=1 -1 -f sql/021_apple_reports.sql
--
-- One row per imported file; a file is stored once (its checksum is unique) and whole (one transaction per file: a
-- bad row stores nothing of its file). Money is thousandths of the currency (bigint) beside its ISO 4217 code; Apple's
-- ids and product ids stay text, as Apple writes them. Rows keep the line of the file they came from.
CREATE TABLE apple_report_files (
    id            bigserial PRIMARY KEY,
    -- subscriber (Sales and Trends SUBSCRIBER, DAILY, DETAILED), financial (FINANCIAL, region ZZ, consolidated) or
    -- finance_detail (FINANCE_DETAIL, region Z1), recognised from the file's header line.
    kind          text NOT NULL CHECK (kind IN ('subscriber', 'financial', 'finance_detail')),
    -- The file's name as given to the command (its last path component).
    file_name     text NOT NULL,
    -- SHA-256 (lower-case hex) of the decompressed text: the same report, gzip or plain, is imported once.
    sha256        text NOT NULL UNIQUE CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    -- Whether the file was gzip-compressed.
    compressed    boolean NOT NULL,
    -- The first and last day the rows cover (Subscriber: event dates, Pacific-time days; Financial: the rows' start
    -- and end dates; detailed Financial: its Start Date / End Date lines, else the transaction dates). NULL: no rows.
    period_start  date,
    period_end    date,
    -- Financial reports: the Apple fiscal month (YYYY-MM) holding the period's middle day; NULL for Sales and Trends.
    fiscal_month  text CHECK (fiscal_month ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
    -- Apple's vendor number when the command was given one (--vendor-number); Apple's files do not state it.
    vendor_number text,
    -- Data rows stored from the file.
    row_count     integer NOT NULL CHECK (row_count >= 0),
    imported_at   timestamptz NOT NULL DEFAULT now(),
    CHECK (period_start <= period_end)
);

-- The Subscriber report: one row per subscription transaction event (a purchase, renewal or refund) on a Pacific day.
CREATE TABLE apple_subscriber_events (
    file_id                         bigint NOT NULL REFERENCES apple_report_files (id),
    line                            integer NOT NULL,   -- the row's line in the file (1 is the header)
    event_date                      date NOT NULL,      -- Event Date: the Pacific-time day of the event
    app_name                        text,               -- App Name
    app_apple_id                    text NOT NULL,      -- App Apple ID
    subscription_name               text,               -- Subscription Name
    subscription_apple_id           text NOT NULL,      -- Subscription Apple ID (not the product id)
    subscription_group_id           text,               -- Subscription Group ID
    standard_subscription_duration  text,               -- Standard Subscription Duration (7 Days, 1 Month, ...)
    subscription_offer_name         text,               -- Subscription Offer Name
    promotional_offer_id            text,               -- Promotional Offer ID
    subscription_offer_type         text,               -- Subscription Offer Type (Free Trial, Pay Up Front, ...)
    subscription_offer_duration     text,               -- Subscription Offer Duration
    marketing_opt_in_duration       text,               -- Marketing Opt-In Duration
    customer_price_milliunits       bigint NOT NULL,    -- Customer Price: negative for a refund
    customer_currency               text NOT NULL,      -- Customer Currency (ISO 4217)
    developer_proceeds_milliunits   bigint NOT NULL,    -- Developer Proceeds
    proceeds_currency               text NOT NULL,      -- Proceeds Currency (ISO 4217)
    preserved_pricing               boolean NOT NULL,   -- Preserved Pricing: Yes
    proceeds_reason                 text,               -- Proceeds Reason ("Rate After One Year": the 85% rate)
    client                          text,               -- Client (News)
    device                          text,               -- Device (iPhone, iPad, ...)
    country                         text NOT NULL,      -- Country: two-letter code of the storefront
    subscriber_id                   text,               -- Subscriber ID: Apple's anonymised id of the subscriber
    subscriber_id_reset             boolean NOT NULL,   -- Subscriber ID Reset: Yes
    refund                          boolean NOT NULL,   -- Refund: Yes for a refund
    purchase_date                   date,               -- Purchase Date: of the refunded purchase
    units                           integer NOT NULL,   -- Units: negative for a refund
    PRIMARY KEY (file_id, line)
);
CREATE INDEX apple_subscriber_events_day_idx ON apple_subscriber_events (event_date, subscription_apple_id);

-- The consolidated Financial report: units and proceeds per product, country and currency for a fiscal month.
CREATE TABLE apple_financial_rows (
    file_id                            bigint NOT NULL REFERENCES apple_report_files (id),
    line                               integer NOT NULL,  -- the row's line in the file
    start_date                         date NOT NULL,     -- Start Date: first day of the fiscal month
    end_date                           date NOT NULL,     -- End Date: last day of the fiscal month
    upc                                text,              -- UPC
    isrc_isbn                          text,              -- ISRC/ISBN
    vendor_identifier                  text NOT NULL,     -- Vendor Identifier: the product id
    quantity                           integer NOT NULL,  -- Quantity: negative for returns
    partner_share_milliunits           bigint NOT NULL,   -- Partner Share: proceeds per unit
    extended_partner_share_milliunits  bigint NOT NULL,   -- Extended Partner Share: quantity x partner share
    partner_share_currency             text NOT NULL,     -- Partner Share Currency (ISO 4217)
    sale_or_return                     text NOT NULL CHECK (sale_or_return IN ('S', 'R')),  -- S sale, R return
    apple_identifier                   text NOT NULL,     -- Apple Identifier of the product
    title                              text,              -- Title
    product_type_identifier            text,              -- Product Type Identifier (IAY: auto-renewable, ...)
    country_of_sale                    text NOT NULL,     -- Country Of Sale: two-letter code
    pre_order_flag                     text,              -- Pre-order Flag
    promo_code                         text,              -- Promo Code
    customer_price_milliunits          bigint NOT NULL,   -- Customer Price: per unit, negative for returns
    customer_currency                  text NOT NULL,     -- Customer Currency (ISO 4217)
    PRIMARY KEY (file_id, line)
);

-- The detailed Financial report: proceeds per transaction and settlement date.
CREATE TABLE apple_finance_detail_rows (
    file_id                            bigint NOT NULL REFERENCES apple_report_files (id),
    line                               integer NOT NULL,  -- the row's line in the file
    transaction_date                   date NOT NULL,     -- Transaction Date: when the customer was charged/refunded
    settlement_date                    date NOT NULL,     -- Settlement Date: when Apple settled it
    apple_identifier                   text NOT NULL,     -- Apple Identifier of the product
    sku                                text NOT NULL,     -- SKU: the product id
    title                              text,              -- Title
    developer_name                     text,              -- Developer Name
    product_type_identifier            text,              -- Product Type Identifier
    country_of_sale                    text NOT NULL,     -- Country of Sale: two-letter code
    quantity                           integer NOT NULL,  -- Quantity: negative for returns
    partner_share_milliunits           bigint NOT NULL,   -- Partner Share: proceeds per unit
    extended_partner_share_milliunits  bigint NOT NULL,   -- Extended Partner Share: quantity x partner share
    partner_share_currency             text NOT NULL,     -- Partner Share Currency (ISO 4217)
    customer_price_milliunits          bigint NOT NULL,   -- Customer Price: per unit, negative for returns
    customer_currency                  text NOT NULL,     -- Customer Currency (ISO 4217)
    sale_or_return                     text NOT NULL CHECK (sale_or_return IN ('S', 'R')),  -- S sale, R return
    promo_code                         text,              -- Promo Code
    order_type                         text,              -- Order Type
    region                             text,              -- Region
    PRIMARY KEY (file_id, line)
);

INSERT INTO schema_migrations (version, name) VALUES (21, 'apple_reports') ON CONFLICT (version) DO NOTHING;
