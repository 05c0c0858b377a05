import Foundation

/// Report files as Apple writes them (column names from Apple's documentation, docs/apple-reports.md), built row by
/// row from a few values so each test shows what it varies.
public enum AppleReportFixtures {
    public static let subscriberColumns = [
        "Event Date", "App Name", "App Apple ID", "Subscription Name", "Subscription Apple ID",
        "Subscription Group ID", "Standard Subscription Duration", "Subscription Offer Name", "Promotional Offer ID",
        "Subscription Offer Type", "Subscription Offer Duration", "Marketing Opt-In Duration", "Customer Price",
        "Customer Currency", "Developer Proceeds", "Proceeds Currency", "Preserved Pricing", "Proceeds Reason",
        "Client", "Device", "Country", "Subscriber ID", "Subscriber ID Reset", "Refund", "Purchase Date", "Units",
    ]

    /// One Subscriber report row; `overrides` replaces columns by name.
    public static func subscriberRow(
        price: String = "9.99",
        currency: String = "USD",
        proceeds: String = "6.99",
        refund: Bool = false,
        units: String = "1",
        _ overrides: [String: String] = [:]
    ) -> String {
        var values: [String: String] = [
            "Event Date": "2026-11-20", "App Name": "Renewals", "App Apple ID": "1234567890",
            "Subscription Name": "Pro Monthly", "Subscription Apple ID": "6400000001",
            "Subscription Group ID": "21000001", "Standard Subscription Duration": "1 Month",
            "Customer Price": price, "Customer Currency": currency, "Developer Proceeds": proceeds,
            "Proceeds Currency": currency, "Device": "iPhone", "Country": "US", "Subscriber ID": "7000000001",
            "Refund": refund ? "Yes" : "", "Purchase Date": refund ? "2026-10-20" : "", "Units": units,
        ]
        values.merge(overrides) { $1 }
        return subscriberColumns.map { values[$0] ?? "" }.joined(separator: "\t")
    }

    /// A Subscriber report: header and `rows`.
    public static func subscriberReport(_ rows: [String]) -> String {
        ([subscriberColumns.joined(separator: "\t")] + rows).joined(separator: "\n") + "\n"
    }

    public static let financialColumns = [
        "Start Date", "End Date", "UPC", "ISRC/ISBN", "Vendor Identifier", "Quantity", "Partner Share",
        "Extended Partner Share", "Partner Share Currency", "Sales or Return", "Apple Identifier",
        "Artist/Show/Developer/Author", "Title", "Label/Studio/Network/Developer/Publisher", "Grid",
        "Product Type Identifier", "ISAN/Other Identifier", "Country Of Sale", "Pre-order Flag", "Promo Code",
        "Customer Price", "Customer Currency",
    ]

    /// One consolidated Financial report row for fiscal month 2026-10 (Sep 28 - Oct 31, 2026 per its dates).
    public static func financialRow(
        quantity: String,
        share: String,
        extended: String,
        saleOrReturn: String = "S",
        price: String = "9.99",
        currency: String = "USD",
        country: String = "US"
    ) -> String {
        let values: [String: String] = [
            "Start Date": "09/27/2026", "End Date": "10/31/2026", "Vendor Identifier": "com.example.renewals.pro",
            "Quantity": quantity, "Partner Share": share, "Extended Partner Share": extended,
            "Partner Share Currency": currency, "Sales or Return": saleOrReturn, "Apple Identifier": "6400000001",
            "Title": "Pro Monthly", "Product Type Identifier": "IAY", "Country Of Sale": country,
            "Customer Price": price, "Customer Currency": currency,
        ]
        return financialColumns.map { values[$0] ?? "" }.joined(separator: "\t")
    }

    /// A consolidated Financial report with Apple's `Total_...` trailer.
    public static func financialReport(_ rows: [String], statedRows: Int? = nil) -> String {
        let lines =
            [financialColumns.joined(separator: "\t")] + rows + [
                "", "Total_Rows\t\(statedRows ?? rows.count)", "Total_Amount\t0", "Total_Units\t0",
            ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// The milliunits of an amount as the reports write it (`-6.99` is -6990, `1400` is 1400000), for tests that sum a
    /// served file's columns; 0 for text that is not a plain decimal.
    public static func milliunits(_ text: String) -> Int64 {
        let negative = text.hasPrefix("-")
        let parts = text.dropFirst(negative ? 1 : 0).split(separator: ".", omittingEmptySubsequences: false)
        let fraction = parts.count > 1 ? String(parts[1]).padding(toLength: 3, withPad: "0", startingAt: 0) : "000"
        let value = (Int64(parts[0]) ?? 0) * 1000 + (Int64(fraction) ?? 0)
        return negative ? -value : value
    }

    /// Writes `text` as `name` in `directory`; with `gzip`, compresses it with the system's gzip (`name.gz`).
    public static func write(
        _ text: String,
        _ name: String,
        in directory: URL,
        gzip: Bool = false
    ) async throws -> String {
        let path = directory.appendingPathComponent(name).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        guard gzip else { return path }
        let outcome = try await ChildProcess.run("/usr/bin/env", ["gzip", "-9", "-f", path])
        guard outcome.status == 0 else { throw FixtureError("gzip failed: \(outcome)") }
        return path + ".gz"
    }
}
