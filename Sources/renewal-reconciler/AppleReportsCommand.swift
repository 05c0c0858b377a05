import ArgumentParser

/// `renewal-reconciler apple-reports ...`: Apple's own App Store Connect reports, beside the ledger.
struct AppleReportsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apple-reports",
        abstract: "Apple's App Store Connect reports (Subscriber, Financial): download them, or load files you have.",
        discussion: """
            `apple-reports import FILE...` loads report files you already have (downloaded from App Store Connect, \
            gzip or not) into PostgreSQL, each file once. `apple-reports download` fetches them from the App Store \
            Connect API with a team key, skipping what is stored already. docs/apple-reports.md lists the reports \
            and their columns.
            """,
        subcommands: [AppleReportsImportCommand.self, AppleReportsDownloadCommand.self]
    )
}
