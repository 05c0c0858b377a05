import ArgumentParser
import Foundation
import Logging
import Reconciler

/// `--database-url`: overrides DATABASE_URL. Refuses a password on the command line (visible in `ps`).
struct DatabaseOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "libpq connection string or URI; overrides DATABASE_URL. Must not contain a password "
                + "(use PGPASSWORD, ~/.pgpass or DATABASE_URL).",
            valueName: "url"))
    var databaseURL: String?

    func connectionString() throws -> String {
        if let flag = databaseURL {
            if DatabaseURL.containsPassword(flag) {
                throw ConfigurationError(
                    "--database-url must not contain a password (it would be visible in `ps`): "
                        + "put it in DATABASE_URL, PGPASSWORD or ~/.pgpass")
            }
            return flag
        }
        guard let env = ProcessInfo.processInfo.environment["DATABASE_URL"], !env.isEmpty else {
            throw ConfigurationError(
                "no database: set DATABASE_URL (e.g. postgresql://reconciler@db.internal/app) or pass --database-url")
        }
        return env
    }
}

/// `--log-format` and `--log-level`, shared by every command.
struct LoggingOptions: ParsableArguments {
    @Option(name: .long, help: "Log format on standard error: text (terminal, journal) or json (log shippers).")
    var logFormat: ReconcilerLogHandler.Format = .text

    @Option(name: .long, help: "Minimum log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    func bootstrap() {
        ReconcilerLogHandler.bootstrap(format: logFormat, level: logLevel)
    }
}

extension ReconcilerLogHandler.Format: ExpressibleByArgument {}
extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Runs `body`, turning the project's errors into a one-line message on standard error and the documented
/// exit code (ExitCode is thrown so ArgumentParser exits with it and prints nothing more).
func runReportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as ExitCode {
        throw error
    } catch let error as ValidationError {
        throw error
    } catch {
        let code = ReconcilerErrorClassifier.exitCode(for: error)
        let message = Redactor.shared.redact(String(describing: error))
        FileHandle.standardError.write(Data("renewal-reconciler: error: \(message)\n".utf8))
        throw ExitCode(code.rawValue)
    }
}
