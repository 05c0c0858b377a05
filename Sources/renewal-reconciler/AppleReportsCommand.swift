import ArgumentParser

/// `renewal-reconciler apple-reports ...`: Apple's own App Store Connect reports, beside the ledger.
struct AppleReportsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apple-reports",
        abstract: "Apple's App Store Connect reports (Subscriber, Financial): load the files finance downloaded.",
        discussion: """
            `apple-reports import FILE...` loads report files you already have (downloaded from App Store Connect, \
            gzip or not) into PostgreSQL, each file once. docs/apple-reports.md lists the reports and their columns.
            """,
        subcommands: [AppleReportsImportCommand.self]
    )
}
