import Testing

@testable import Reconciler

/// A resumed run asks Apple the way it started (docs/operations.md, `--source`): a one-app run given another
/// source, or a run of an apps file resumed without one, is a configuration error (exit 78) naming what to give.
@Suite struct ResumeSourceCheckTests {
    static let apple = AppleConfiguration(
        productionURL: "http://127.0.0.1:9/verifyReceipt",
        sandboxURL: "http://127.0.0.1:9/sandbox",
        sharedSecret: Secret("resume-check-secret"),
        bundleId: "com.example.app"
    )

    static func request(appsFile: String? = nil) -> ReconciliationRunner.Request {
        var request = ReconciliationRunner.Request(
            mode: .nightly,
            selection: .due(lookaheadSeconds: 3600, lookbackSeconds: 7200, minRecheckSeconds: 60),
            options: RunOptions(),
            apps: [AppDefinition(bundleId: "com.example.app", credentials: .verifyReceipt(apple))]
        )
        request.appsFile = appsFile
        return request
    }

    static func parameters(source: AppleSourceKind?, apps: [String: AppleSourceKind]? = nil) -> RunParameters {
        RunParameters(
            selection: .due(lookaheadSeconds: 3600, lookbackSeconds: 7200, minRecheckSeconds: 60),
            options: RunOptions(),
            bundleId: "com.example.app",
            fixedClock: false,
            source: source,
            apps: apps
        )
    }

    @Test func theSameSourceOrAnOldRunWithoutOneResumes() throws {
        try ReconciliationRunner.checkSameApps(Self.request(), Self.parameters(source: .verifyReceipt))
        // Runs stored before the Server API asked through verifyReceipt.
        try ReconciliationRunner.checkSameApps(Self.request(), Self.parameters(source: nil))
    }

    @Test func anotherSourceIsAConfigurationErrorNamingTheRunsOwn() {
        let error = #expect(throws: ConfigurationError.self) {
            try ReconciliationRunner.checkSameApps(Self.request(), Self.parameters(source: .serverAPI))
        }
        #expect(error?.message.contains("--source server-api") == true, "\(String(describing: error))")
    }

    @Test func aRunOfAnAppsFileNeedsTheFile() {
        let error = #expect(throws: ConfigurationError.self) {
            try ReconciliationRunner.checkSameApps(
                Self.request(),
                Self.parameters(source: .auto, apps: ["com.example.app": .verifyReceipt])
            )
        }
        #expect(error?.message.contains("give the same --apps FILE") == true)
    }
}
