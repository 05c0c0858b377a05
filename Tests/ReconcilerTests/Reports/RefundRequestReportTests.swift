import Foundation
import Postgres
import Testing

@testable import Reconciler

/// Refund requests (`CONSUMPTION_REQUEST`) first seen in a run are listed in its report with the 12 hours Apple
/// allows for the app's answer and what followed (docs/reports.md, "Refund requests"), on a real PostgreSQL.
@Suite struct RefundRequestReportTests {
    @Test func requestsFirstSeenInTheRunAreListedWithTheirDeadlineAndOutcome() throws {
        let (database, connection) = try LedgerMoneyReportTests.prepare()
        defer {
            connection.close()
            database.drop()
        }
        try connection.execute(
            """
            INSERT INTO app_store_notifications (notification_uuid, notification_type, original_transaction_id,
                transaction_id, signed_date, signed_payload, source, subscription_known, first_seen_run_id)
            VALUES ('c1', 'CONSUMPTION_REQUEST', 'o1', 't1', '2024-04-30T10:00:00Z', 'p', 'history', true, 42),
                   ('c2', 'CONSUMPTION_REQUEST', 'o2', 't2', '2024-04-30T11:00:00Z', 'p', 'history', true, 42),
                   ('c4', 'CONSUMPTION_REQUEST', 'o4', 't4', '2024-04-30T12:00:00Z', 'p', 'history', true, 42),
                   ('r1', 'REFUND', 'o1', 't1', '2024-04-30T20:00:00Z', 'p', 'history', true, 42),
                   ('d4', 'REFUND_DECLINED', 'o4', 't4', '2024-04-30T21:00:00Z', 'p', 'history', true, 42),
                   ('c3', 'CONSUMPTION_REQUEST', 'o3', 't3', '2024-04-29T10:00:00Z', 'p', 'history', true, 41)
            """
        )
        let (folder, directory) = try LedgerMoneyReportTests.generate(connection)
        _ = directory
        let data = try Data(contentsOf: folder.appendingPathComponent("summary.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let notifications = try #require(object["notifications"] as? [String: Any])
        let requests = try #require(notifications["refund_requests"] as? [[String: Any]])
        #expect(requests.map { $0["transaction_id"] as? String } == ["t1", "t2", "t4"])
        #expect(requests.map { $0["outcome"] as? String } == ["refunded", "open", "declined"])
        #expect(requests.first?["requested_at"] as? String == "2024-04-30T10:00:00Z")
        #expect(requests.first?["answer_by"] as? String == "2024-04-30T22:00:00Z")
        #expect(requests.first?["original_transaction_id"] as? String == "o1")

        let html = try String(contentsOf: folder.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(html.contains("Refund requests (3, 1 open)"))
        #expect(
            html.contains(
                "<td>t2</td><td>o2</td><td>2024-04-30T11:00:00Z</td><td>2024-04-30T23:00:00Z</td><td>open</td>"
            )
        )
        #expect(!html.contains("<td>t3</td>"))
    }
}
