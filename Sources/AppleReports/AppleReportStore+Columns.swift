/// Which field of each typed row goes into which column of its table (`sql/021_apple_reports.sql`,
/// `sql/023_subscription_reports.sql`).
extension AppleReportStore {
    static func subscriberColumns(_ rows: [SubscriberReportRow]) -> [AppleReportStoredColumn] {
        [
            .init("line", "integer", rows) { Int64($0.line) },
            .init("event_date", "date", rows) { $0.eventDate },
        ] + SalesReportSubscription.columns(rows.map(\.subscription)) + [
            .init("subscription_offer_name", "text", rows) { $0.subscriptionOfferName },
            .init("promotional_offer_id", "text", rows) { $0.promotionalOfferId },
            .init("subscription_offer_type", "text", rows) { $0.subscriptionOfferType },
            .init("subscription_offer_duration", "text", rows) { $0.subscriptionOfferDuration },
            .init("marketing_opt_in_duration", "text", rows) { $0.marketingOptInDuration },
        ] + SalesReportPrice.columns(rows.map(\.price)) + [
            .init("client", "text", rows) { $0.client },
            .init("device", "text", rows) { $0.device },
            .init("country", "text", rows) { $0.country },
            .init("subscriber_id", "text", rows) { $0.subscriberId },
            .init("subscriber_id_reset", "boolean", rows) { $0.subscriberIdReset },
            .init("refund", "boolean", rows) { $0.refund },
            .init("purchase_date", "date", rows) { $0.purchaseDate },
            .init("units", "integer", rows) { $0.units },
        ]
    }

    static func financialColumns(_ rows: [FinancialReportRow]) -> [AppleReportStoredColumn] {
        [
            .init("line", "integer", rows) { Int64($0.line) },
            .init("start_date", "date", rows) { $0.startDate },
            .init("end_date", "date", rows) { $0.endDate },
            .init("upc", "text", rows) { $0.upc },
            .init("isrc_isbn", "text", rows) { $0.isrcIsbn },
            .init("vendor_identifier", "text", rows) { $0.vendorIdentifier },
            .init("title", "text", rows) { $0.title },
            .init("product_type_identifier", "text", rows) { $0.productTypeIdentifier },
            .init("pre_order_flag", "text", rows) { $0.preOrderFlag },
            .init("promo_code", "text", rows) { $0.promoCode },
        ] + amountColumns(rows.map(\.amounts))
    }

    static func financeDetailColumns(_ rows: [FinanceDetailReportRow]) -> [AppleReportStoredColumn] {
        [
            .init("line", "integer", rows) { Int64($0.line) },
            .init("transaction_date", "date", rows) { $0.transactionDate },
            .init("settlement_date", "date", rows) { $0.settlementDate },
            .init("sku", "text", rows) { $0.sku },
            .init("title", "text", rows) { $0.title },
            .init("developer_name", "text", rows) { $0.developerName },
            .init("product_type_identifier", "text", rows) { $0.productTypeIdentifier },
            .init("promo_code", "text", rows) { $0.promoCode },
            .init("order_type", "text", rows) { $0.orderType },
            .init("region", "text", rows) { $0.region },
        ] + amountColumns(rows.map(\.amounts))
    }

    /// The columns both Financial reports' tables have for `FinancialAmounts`.
    static func amountColumns(_ rows: [FinancialAmounts]) -> [AppleReportStoredColumn] {
        [
            .init("apple_identifier", "text", rows) { $0.appleIdentifier },
            .init("country_of_sale", "text", rows) { $0.countryOfSale },
            .init("quantity", "integer", rows) { $0.quantity },
            .init("partner_share_milliunits", "bigint", rows) { $0.partnerShareMilliunits },
            .init("extended_partner_share_milliunits", "bigint", rows) { $0.extendedPartnerShareMilliunits },
            .init("partner_share_currency", "text", rows) { $0.partnerShareCurrency },
            .init("customer_price_milliunits", "bigint", rows) { $0.customerPriceMilliunits },
            .init("customer_currency", "text", rows) { $0.customerCurrency },
            .init("sale_or_return", "text", rows) { $0.saleOrReturn.rawValue },
        ]
    }

    static func subscriptionEventColumns(_ rows: [SubscriptionEventReportRow]) -> [AppleReportStoredColumn] {
        [
            .init("line", "integer", rows) { Int64($0.line) },
            .init("event_date", "date", rows) { $0.eventDate },
            .init("event", "text", rows) { $0.event },
        ] + SalesReportSubscription.columns(rows.map(\.subscription)) + [
            .init("subscription_offer_type", "text", rows) { $0.subscriptionOfferType },
            .init("subscription_offer_duration", "text", rows) { $0.subscriptionOfferDuration },
            .init("marketing_opt_in", "boolean", rows) { $0.marketingOptIn },
            .init("marketing_opt_in_duration", "text", rows) { $0.marketingOptInDuration },
            .init("preserved_pricing", "boolean", rows) { $0.preservedPricing },
            .init("proceeds_reason", "text", rows) { $0.proceedsReason },
            .init("subscription_offer_name", "text", rows) { $0.subscriptionOfferName },
            .init("promotional_offer_id", "text", rows) { $0.promotionalOfferId },
            .init("consecutive_paid_periods", "integer", rows) { $0.consecutivePaidPeriods.map(Int64.init) },
            .init("original_start_date", "date", rows) { $0.originalStartDate },
            .init("client", "text", rows) { $0.client },
            .init("device", "text", rows) { $0.device },
            .init("state", "text", rows) { $0.state },
            .init("country", "text", rows) { $0.country },
            .init("previous_subscription_name", "text", rows) { $0.previousSubscriptionName },
            .init("previous_subscription_apple_id", "text", rows) { $0.previousSubscriptionAppleId },
            .init("days_before_canceling", "integer", rows) { $0.daysBeforeCanceling.map(Int64.init) },
            .init("cancellation_reason", "text", rows) { $0.cancellationReason },
            .init("days_canceled", "integer", rows) { $0.daysCanceled.map(Int64.init) },
            .init("quantity", "integer", rows) { Int64($0.quantity) },
        ]
    }

    static func subscriptionColumns(_ rows: [SubscriptionReportRow]) -> [AppleReportStoredColumn] {
        let fields: [AppleReportStoredColumn] =
            [
                .init("line", "integer", rows) { Int64($0.line) }
            ] + SalesReportSubscription.columns(rows.map(\.subscription)) + [
                .init("subscription_offer_name", "text", rows) { $0.subscriptionOfferName },
                .init("promotional_offer_id", "text", rows) { $0.promotionalOfferId },
            ] + SalesReportPrice.columns(rows.map(\.price)) + [
                .init("client", "text", rows) { $0.client },
                .init("device", "text", rows) { $0.device },
                .init("state", "text", rows) { $0.state },
                .init("country", "text", rows) { $0.country },
            ]
        let counts = SubscriptionCounts.columns.enumerated().map { index, column in
            AppleReportStoredColumn(column.stored, "integer", rows) { $0.counts.values[index].map(Int64.init) }
        }
        return fields + counts
    }
}
