import Foundation

/// Whether this test process checks request rates on the wall clock, as the simulator counts arrivals in each
/// second (`peak_requests_per_second`, its 429s). Those counts hold only for a run that has the machine to itself:
/// beside the rest of the suite a starved process's requests reach the simulator bunched up. The default suite
/// checks rates where they are deterministic (the virtual clock: `ReconciliationPipelineTests`, `SendWindowTests`;
/// durations, which load only lengthens); CI runs the tests that use this flag again, one at a time on release
/// binaries, with `RENEWAL_RECONCILER_WALL_CLOCK_RATES=1` (docs/testing.md, "One command").
enum WallClockRates {
    static let checked = ProcessInfo.processInfo.environment["RENEWAL_RECONCILER_WALL_CLOCK_RATES"] == "1"

    /// A simulator's per-second limit (`["--max-rps", "44"]`) where rates are checked; elsewhere one no run reaches.
    /// Beside the rest of the suite the bunched arrivals cross a limit near the app's rate, and a 429 among a
    /// malformed receipt's 21002 answers leaves it unresolved instead of rejected: the truth would depend on the load.
    static func limit(_ flag: String, _ value: Int) -> [String] {
        [flag, String(checked ? value : 1_000_000)]
    }
}
