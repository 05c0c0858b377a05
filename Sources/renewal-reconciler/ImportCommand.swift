import ArgumentParser
import Foundation
import Reconciler

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Load subscriptions from a JSONL or CSV file (upsert by original_transaction_id).",
        discussion: """
            Fields (JSON keys, or CSV header names in any order): user_id, product_id, original_transaction_id, \
            latest_receipt, expires_at (RFC 3339 with a zone), and optionally environment (Production/Sandbox), \
            bundle_id and currency (ISO 4217, the customer's: it prices verifyReceipt transactions with the \
            products catalog). Every line is validated and each bad one is named by line number, values the \
            database cannot store included (a NUL character, an id over 1024 bytes). A record may span at most 10 \
            lines and 8 MiB; a line with no line break for 16 MiB stops the import (nothing is loaded). By default \
            the import is all-or-nothing: one bad line loads nothing (exit 64). --skip-invalid loads the valid lines, \
            lists the rest and exits 2 when it skipped any (completed with problems). An existing row keeps its receipt and expiry when the stored expiry is newer \
            than the file's (nothing moves backwards). Streams: a million lines load in constant memory.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    @Option(name: .long, help: ArgumentHelp("The file to load (`-` for standard input).", valueName: "path"))
    var file: String

    @Option(help: "jsonl or csv (default: from the extension, else from the content).")
    var format: ImportFormat?

    @Flag(help: "Load the valid lines even when some are invalid (they are listed).")
    var skipInvalid = false

    func run() throws {
        logging.bootstrap()
        try runReportingErrors {
            let importer = Importer(connectionString: try database.checkedConnectionString())
            let result = try importer.importFile(file, format: format, skipInvalid: skipInvalid)
            for warning in result.warnings {
                // The parser's warning names the file itself.
                FileHandle.standardError.write(Data("warning: \(warning)\n".utf8))
            }
            let shown = result.invalid.prefix(100)
            for error in shown { FileHandle.standardError.write(Data("\(file): \(error)\n".utf8)) }
            if result.invalid.count > shown.count {
                FileHandle.standardError.write(
                    Data("\(file): ... and \(result.invalid.count - shown.count) more invalid lines\n".utf8)
                )
            }
            if result.stoppedEarly {
                throw UsageError("\(file): the file could not be read to its end (see above); nothing was loaded")
            }
            if !result.committed {
                throw UsageError(
                    "\(file): \(result.invalid.count) invalid line(s); nothing was loaded (fix them, or use --skip-invalid to load the valid lines)"
                )
            }
            print(Self.summary(result, file: file))
            if !result.invalid.isEmpty {
                // Completed with problems (docs/operations.md, "Backfill, import, explain"): the valid lines
                // are loaded, the invalid ones are not.
                throw ExitCode(ReconcilerExitCode.unresolvedAboveThreshold.rawValue)
            }
        }
    }

    /// `F: 5000 inserted, 0 updated, 1 invalid line skipped (not loaded)`.
    static func summary(_ result: Importer.Result, file: String) -> String {
        var line = "\(file): \(result.inserted) inserted, \(result.updated) updated"
        if result.keptNewer > 0 { line += ", \(result.keptNewer) kept (stored expiry newer than the file's)" }
        let skipped = result.invalid.count
        if skipped > 0 { line += ", \(skipped) invalid line\(skipped == 1 ? "" : "s") skipped (not loaded)" }
        return line
    }
}

extension ImportFormat: ExpressibleByArgument {}
