import Foundation

/// A report download request taken apart and checked (docs/simulator.md, "App Store Connect reports"): the Subscriber,
/// Subscription Event or Subscription report of a Pacific day, or a Financial report (consolidated or detailed) of a
/// fiscal month. Anything else is Apple's 400 `PARAMETER_ERROR.INVALID` naming the parameter.
enum ReportRequest: Sendable, Equatable {
    case subscriber(ReportDay)
    case subscriptionEvent(ReportDay)
    case subscription(ReportDay)
    case financial(FiscalMonth, detailed: Bool)

    /// The version of the Sales and Trends reports the simulator writes.
    static let subscriberVersion = "1_3"

    /// The filters of `query` (percent-decoded); a repeated parameter keeps its first value.
    static func filters(_ query: Substring) -> [String: String] {
        var out: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
            if out[name] == nil { out[name] = value }
        }
        return out
    }

    /// `filter[name]`'s value, which must be one of `allowed` (any non-empty value when nil).
    private static func value(
        _ filters: [String: String],
        _ name: String,
        _ allowed: [String]? = nil
    ) throws(ConnectAPIError) -> String {
        let parameter = "filter[\(name)]"
        guard let value = filters[parameter], !value.isEmpty else {
            throw .invalid(parameter, "The parameter '\(parameter)' is required.")
        }
        if let allowed, !allowed.contains(value) {
            throw .invalid(
                parameter,
                "'\(value)' is not a valid value for '\(parameter)' here; the simulator serves \(allowed.joined(separator: ", "))."
            )
        }
        return value
    }

    /// `GET /v1/salesReports`: SUBSCRIBER with DETAILED, or SUBSCRIPTION_EVENT or SUBSCRIPTION with SUMMARY; DAILY,
    /// version 1_3, a `YYYY-MM-DD` day.
    static func sales(_ query: Substring, vendorNumber: String) throws(ConnectAPIError) -> ReportRequest {
        let f = filters(query)
        _ = try value(f, "vendorNumber", [vendorNumber])
        let type = try value(f, "reportType", ["SUBSCRIBER", "SUBSCRIPTION_EVENT", "SUBSCRIPTION"])
        _ = try value(f, "reportSubType", [type == "SUBSCRIBER" ? "DETAILED" : "SUMMARY"])
        _ = try value(f, "frequency", ["DAILY"])
        guard let version = f["filter[version]"], !version.isEmpty else {
            throw .invalid(
                "filter[version]",
                "Please include the version parameter. The latest version for this report is \(subscriberVersion)."
            )
        }
        guard version == subscriberVersion else {
            throw .invalid(
                "filter[version]",
                "The version parameter you have specified is invalid. The latest version for this report is \(subscriberVersion)."
            )
        }
        let date = try value(f, "reportDate")
        guard let day = ReportDay(parsing: date[...]) else {
            throw .invalid("filter[reportDate]", "'\(date)' is not a date of the form YYYY-MM-DD.")
        }
        switch type {
        case "SUBSCRIPTION_EVENT": return .subscriptionEvent(day)
        case "SUBSCRIPTION": return .subscription(day)
        default: return .subscriber(day)
        }
    }

    /// `GET /v1/financeReports`: FINANCIAL with region ZZ or FINANCE_DETAIL with Z1, a `YYYY-MM` fiscal month.
    static func finance(_ query: Substring, vendorNumber: String) throws(ConnectAPIError) -> ReportRequest {
        let f = filters(query)
        _ = try value(f, "vendorNumber", [vendorNumber])
        let type = try value(f, "reportType", ["FINANCIAL", "FINANCE_DETAIL"])
        let detailed = type == "FINANCE_DETAIL"
        _ = try value(f, "regionCode", [detailed ? "Z1" : "ZZ"])
        let date = try value(f, "reportDate")
        guard let month = FiscalMonth(reportDate: date[...]) else {
            throw .invalid(
                "filter[reportDate]",
                "'\(date)' is not a fiscal year and period of the form YYYY-MM (period 01 to 12)."
            )
        }
        return .financial(month, detailed: detailed)
    }
}
