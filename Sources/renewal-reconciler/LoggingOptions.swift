import ArgumentParser
import Foundation
import Logging
import Reconciler

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
