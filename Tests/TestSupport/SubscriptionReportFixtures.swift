import Foundation

/// Subscription Event and Subscription report files as Apple writes them (column names from Apple's documentation,
/// docs/apple-reports.md), built row by row from a few values so each test shows what it varies.
public enum SubscriptionReportFixtures {
    public static let eventColumns = [
        "Event Date", "Event", "App Name", "App Apple ID", "Subscription Name", "Subscription Apple ID",
        "Subscription Group ID", "Standard Subscription Duration", "Subscription Offer Type",
        "Subscription Offer Duration", "Marketing Opt-In", "Marketing Opt-In Duration", "Preserved Pricing",
        "Proceeds Reason", "Subscription Offer Name", "Promotional Offer ID", "Consecutive Paid Periods",
        "Original Start Date", "Client", "Device", "State", "Country", "Previous Subscription Name",
        "Previous Subscription Apple ID", "Days Before Canceling", "Cancellation Reason", "Days Canceled", "Quantity",
    ]

    /// One Subscription Event report row; `overrides` replaces columns by name.
    public static func eventRow(
        _ event: String = "Renew",
        quantity: String = "3",
        _ overrides: [String: String] = [:]
    )
        -> String
    {
        var values: [String: String] = [
            "Event Date": "2026-11-20", "Event": event, "App Name": "Renewals", "App Apple ID": "1234567890",
            "Subscription Name": "Pro Monthly", "Subscription Apple ID": "6400000001",
            "Subscription Group ID": "21000001", "Standard Subscription Duration": "1 Month",
            "Consecutive Paid Periods": "4", "Original Start Date": "2026-07-20", "Device": "iPhone", "Country": "US",
            "Quantity": quantity,
        ]
        values.merge(overrides) { $1 }
        return eventColumns.map { values[$0] ?? "" }.joined(separator: "\t")
    }

    public static let subscriptionColumns = [
        "App Name", "App Apple ID", "Subscription Name", "Subscription Apple ID", "Subscription Group ID",
        "Standard Subscription Duration", "Subscription Offer Name", "Promotional Offer ID", "Customer Price",
        "Customer Currency", "Developer Proceeds", "Proceeds Currency", "Preserved Pricing", "Proceeds Reason",
        "Client", "Device", "State", "Country", "Active Standard Price Subscriptions",
        "Active Free Trial Introductory Offer Subscriptions", "Active Pay Up Front Introductory Offer Subscriptions",
        "Active Pay As You Go Introductory Offer Subscriptions", "Free Trial Promotional Offer Subscriptions",
        "Pay Up Front Promotional Offer Subscriptions", "Pay As You Go Promotional Offer Subscriptions",
        "Free Trial Offer Code Subscriptions", "Pay Up Front Offer Code Subscriptions",
        "Pay As You Go Offer Code Subscriptions", "Marketing Opt-Ins", "Billing Retry", "Grace Period", "Subscribers",
    ]

    /// One Subscription report row; `overrides` replaces columns by name.
    public static func subscriptionRow(
        active: String = "12",
        subscribers: String = "12",
        _ overrides: [String: String] = [:]
    )
        -> String
    {
        var values: [String: String] = [
            "App Name": "Renewals", "App Apple ID": "1234567890", "Subscription Name": "Pro Monthly",
            "Subscription Apple ID": "6400000001", "Subscription Group ID": "21000001",
            "Standard Subscription Duration": "1 Month", "Customer Price": "9.99", "Customer Currency": "USD",
            "Developer Proceeds": "6.99", "Proceeds Currency": "USD", "Device": "iPhone", "Country": "US",
            "Active Standard Price Subscriptions": active, "Subscribers": subscribers,
        ]
        values.merge(overrides) { $1 }
        // The count columns (from the 19th) are 0 unless given; the others blank.
        return subscriptionColumns.enumerated().map { values[$0.element] ?? ($0.offset >= 18 ? "0" : "") }
            .joined(separator: "\t")
    }

    /// A report: header `columns` and `rows`.
    public static func report(_ columns: [String], _ rows: [String]) -> String {
        ([columns.joined(separator: "\t")] + rows).joined(separator: "\n") + "\n"
    }
}

extension SubscriptionReportFixtures {
    /// Writes `text` as `name` in `directory` (gzip: `name.gz`), as `AppleReportFixtures.write` does.
    public static func write(
        _ text: String,
        _ name: String,
        _ directory: URL,
        gzip: Bool = false
    ) async throws
        -> String
    {
        try await AppleReportFixtures.write(text, name, in: directory, gzip: gzip)
    }
}
