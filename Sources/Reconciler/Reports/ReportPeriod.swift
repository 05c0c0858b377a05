import CivilTime
import Foundation

/// The period a run's report covers (docs/reports.md, "The period"): purchases and refunds dated after
/// `start` and at or before `end` (the run's as-of). `start` is the as-of of the previous completed, non-dry
/// run of the same mode (`previousRunId`), or midnight UTC of the as-of's day when there is none. Encoded
/// as summary.json's `period`.
public struct ReportPeriod: Sendable, Equatable, Codable {
    public var start: String
    public var end: String
    /// The run whose as-of starts the period; nil: the calendar day of the as-of.
    public var previousRunId: Int64?
    /// `since_previous_run` or `calendar_day`.
    public var rule: String

    public init(start: Date, end: Date, previousRunId: Int64?) {
        self.start = RFC3339.string(start)
        self.end = RFC3339.string(end)
        self.previousRunId = previousRunId
        rule = previousRunId == nil ? "calendar_day" : "since_previous_run"
    }

    enum CodingKeys: String, CodingKey {
        case start, end, rule
        case previousRunId = "previous_run_id"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(start, forKey: .start)
        try c.encode(end, forKey: .end)
        try c.encode(previousRunId, forKey: .previousRunId)
        try c.encode(rule, forKey: .rule)
    }

    /// The run a period follows: the newest completed, non-dry run of the mode `mode` with an as-of not after
    /// `asOf` (SQL expressions), and created before the run `beforeId` when the run already exists:
    /// `prev.id`, `prev.as_of`. For a LEFT JOIN LATERAL, both where a run is created and where its report is built.
    static func previousRunSQL(mode: String, asOf: String, beforeId: String? = nil) -> String {
        """
        SELECT p.id, p.as_of FROM reconciliation_runs p
         WHERE \(beforeId.map { "p.id < \($0) AND " } ?? "")p.mode = \(mode) AND p.status = 'completed'
           AND NOT p.dry_run AND p.as_of <= \(asOf)
         ORDER BY p.as_of DESC, p.id DESC LIMIT 1
        """
    }

    /// Midnight UTC of the day of `asOf` (an SQL timestamptz expression).
    static func calendarDaySQL(_ asOf: String) -> String {
        "(date_trunc('day', \(asOf) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')"
    }
}
