import Foundation
import Reconciler
import Testing

/// `reconciliation_runs.parameters`: what an older build stored still decodes (and resumes), with
/// --recheck-revoked at its default; what this build stores keeps the same shape.
@Suite struct SelectionCodingTests {
    /// The parameters JSON of a nightly run started by the build before --recheck-revoked existed.
    static let olderBuildParameters = """
        {"bundleId":"com.example.renewals","fixedClock":true,"options":{"backoffBaseSeconds":0.5,\
        "backoffCapSeconds":30,"batchSize":200,"concurrency":64,"connectTimeoutSeconds":5,"dryRun":false,\
        "excludeOldTransactions":false,"maxAttempts":5,"maxRetryAfterSeconds":300,"maxUnresolvedFraction":0.01,\
        "rate":50,"requestTimeoutSeconds":30},"selection":{"due":{"lookaheadSeconds":86400,\
        "lookbackSeconds":5184000,"minRecheckSeconds":72000}}}
        """

    @Test func parametersStoredByAnOlderBuildDecodeWithTheDefaultRecheckInterval() throws {
        let parameters = try RunParameters.decode(Self.olderBuildParameters)
        #expect(
            parameters.selection
                == .due(
                    lookaheadSeconds: 86_400,
                    lookbackSeconds: 5_184_000,
                    minRecheckSeconds: 72_000,
                    recheckRevokedSeconds: 7 * 86_400,
                    sweepDays: 0
                )
        )
        #expect(Selection.defaultRecheckRevokedSeconds == 7 * 86_400)
        #expect(parameters.bundleId == "com.example.renewals")
    }

    @Test func dueAndBackfillSelectionsRoundTripInTheStoredShape() throws {
        let due = Selection.due(
            lookaheadSeconds: 3600,
            lookbackSeconds: 7200,
            minRecheckSeconds: 60,
            recheckRevokedSeconds: 36 * 3600,
            sweepDays: 7
        )
        let parameters = RunParameters(selection: due, options: RunOptions(), bundleId: nil, fixedClock: false)
        let json = try parameters.jsonString()
        #expect(json.contains(#""due":{"lookaheadSeconds":3600,"lookbackSeconds":7200,"minRecheckSeconds":60,"#))
        #expect(json.contains(#""recheckRevokedSeconds":129600"#))
        #expect(json.contains(#""sweepDays":7"#))
        #expect(try RunParameters.decode(json) == parameters)

        let filter = BackfillFilter(originalTransactionIds: ["1000"], states: ["revoked"])
        let backfill = RunParameters(
            selection: .backfill(filter),
            options: RunOptions(),
            bundleId: "b",
            fixedClock: true
        )
        let backfillJSON = try backfill.jsonString()
        #expect(backfillJSON.contains(#""selection":{"backfill":{"_0":{"#))
        #expect(try RunParameters.decode(backfillJSON) == backfill)
        // The shape an older build stored for a backfill.
        let older = #"{"backfill":{"_0":{"all":true}}}"#
        let decoded = try JSONDecoder().decode(Selection.self, from: Data(older.utf8))
        #expect(decoded == .backfill(BackfillFilter(all: true)))
    }

    @Test func aSelectionWithTwoKindsIsRefused() {
        let both =
            #"{"due":{"lookaheadSeconds":1,"lookbackSeconds":1,"minRecheckSeconds":1},"#
            + #""backfill":{"_0":{"all":true}}}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Selection.self, from: Data(both.utf8)) }
    }
}
