import ArgumentParser
import CivilTime
import Foundation
import Postgres
import Reconciler

/// `events export [--since T] [--after-id N] [--format jsonl|csv] [--out FILE]` (docs/events.md, "Export").
struct EventsExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the subscription events as JSON Lines or CSV, oldest first, for a warehouse.",
        discussion: """
            JSON Lines: each line the webhook's data object (docs/events.md). CSV: one column per field, before and \
            after flattened into before_state, before_expires_at, ... Incremental loads: keep the last event_id's \
            number and pass it as --after-id next time.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    @Option(help: ArgumentHelp("Only events written at or after this time (RFC 3339).", valueName: "rfc3339"))
    var since: String?

    @Option(help: ArgumentHelp("Only events after this one (the number of evt_<N>).", valueName: "n"))
    var afterId: Int64 = 0

    @Option(help: "jsonl or csv.")
    var format: String = EventExporter.Format.jsonl.rawValue

    @Option(help: ArgumentHelp("Write here instead of standard output.", valueName: "path"))
    var out: String?

    func validate() throws {
        if let since, RFC3339.parse(since) == nil { throw ValidationError("--since: \(since) is not RFC 3339") }
        guard EventExporter.Format(rawValue: format) != nil else {
            throw ValidationError("--format must be jsonl or csv, not \(format)")
        }
        guard afterId >= 0 else { throw ValidationError("--after-id must be 0 or more") }
    }

    func run() throws {
        logging.bootstrap()
        try runReportingErrors {
            let conn = try database.migratedConnection()
            defer { conn.close() }
            let handle: FileHandle
            if let out {
                guard FileManager.default.createFile(atPath: out, contents: nil),
                    let file = FileHandle(forWritingAtPath: out)
                else { throw ConfigurationError("--out \(out) cannot be written") }
                handle = file
            } else {
                handle = FileHandle.standardOutput
            }
            defer { if out != nil { try? handle.close() } }
            let count = try EventExporter(connection: conn).export(
                since: since.flatMap(RFC3339.parse),
                afterId: afterId,
                format: EventExporter.Format(rawValue: format) ?? .jsonl,
                to: handle
            )
            FileHandle.standardError.write(Data("events: \(count) exported\n".utf8))
        }
    }
}
