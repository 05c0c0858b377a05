@testable import Reconciler

extension RunParameters {
    /// The parameters of a workers' nightly run with the usual due window, for tests of the worker coordination.
    static let workersRun = RunParameters(
        selection: .due(
            lookaheadSeconds: 3600,
            lookbackSeconds: 7200,
            minRecheckSeconds: 60,
            recheckRevokedSeconds: 3600,
            sweepDays: 0
        ),
        options: RunOptions(),
        bundleId: nil,
        fixedClock: true,
        workers: true
    )
}
