/// The process exit codes of `renewal-reconciler`, shared by every command (also in `--help` and docs/operations.md).
///
/// They follow sysexits(3) where one fits, so cron/systemd and shell scripts can tell "try again later"
/// (75) from "fix the configuration" (78).
public enum ReconcilerExitCode: Int32, Sendable, CaseIterable {
    /// The run completed; unresolved items (if any) stayed within `--max-unresolved`.
    case success = 0
    /// The run failed (database unreachable, an unexpected error); nothing half-written: re-run or `--resume`.
    case failure = 1
    /// The run completed but more items than `--max-unresolved` stayed unresolved (Apple faults, timeouts), or
    /// Get Notification History could not be read (its cursor stays for the next run).
    case unresolvedAboveThreshold = 2
    /// Bad command-line usage or bad input file.
    case usage = 64
    /// Apple stayed unreachable (transport failures, 5xx) past the outage breaker (`--outage-failures`,
    /// `--outage-window`): the run stopped `partial` with its unfinished items pending; `run --resume` once
    /// Apple answers again. sysexits' EX_UNAVAILABLE: a service we depend on is down, not our configuration
    /// (78) and not a finished run with too many unresolved items (2).
    case appleUnavailable = 69
    /// Another run holds the lock; try again later.
    case locked = 75
    /// Configuration error: missing/wrong shared secret (Apple answering 21004 systematically), bad URL,
    /// missing bundle id, HTTPS to Apple refused (`TLSRefusalGuard`), an unusable `--ca-file`, ...
    case configuration = 78

    /// One line per code, for `--help`.
    public static let helpText = """
        Exit codes:
          0   completed (unresolved items within --max-unresolved)
          1   failed (database or unexpected error; re-run or --resume; a report
              that could not be written after the run: --resume writes it)
          2   completed with unresolved items above --max-unresolved, or without
              notification history (Apple kept failing; the next run reads it);
              import --skip-invalid skipped lines
          64  usage error (a flag outside its bound too) or invalid input file
          69  Apple unreachable (--outage-failures in a row and no answer for
              --outage-window): stopped partial, unfinished items pending;
              `run --resume` once Apple answers again
          75  another run holds the lock (try again later), or took it from this
              run after a database restart (this run stopped at once)
          78  configuration error (systematic 21004: wrong shared secret; a 401 from
              the App Store Server API: wrong key, key id, issuer id or bundle id; bad URL;
              missing setting; an API key that is not EC P-256; HTTPS to Apple refused:
              untrusted certificate, wrong host, TLS below 1.2; see --ca-file; a
              --report-dir or --metrics-file that cannot be written)
          130, 143  a second SIGINT or SIGTERM while stopping: exited at once (resume)
        """
}
