import AppStoreClient
import AppStoreSignedData
import Crypto
import ReconcilerDemo
import Testing

@testable import Reconciler

/// `AppDefinition.movingSimulatorBase`: the later nights of `demo --nights` point each app at the restarted
/// simulator's port. Every URL on the old simulator moves, path kept; a URL elsewhere stays.
@Suite struct SimulatorBaseTests {
    static let old = "http://127.0.0.1:44651"
    static let new = "http://127.0.0.1:51002"

    static func settings(production: String, sandbox: String) throws -> ServerAPISettings {
        let api = AppStoreAPIConfiguration(
            key: try APIPrivateKey(pem: P256.Signing.PrivateKey().pemRepresentation),
            keyId: "ABC123DEFG",
            issuerId: "57246542-96fe-1a63-e053-0824d011072a",
            bundleId: "com.example.app"
        )
        return ServerAPISettings(
            api: api,
            appAppleId: 1234,
            endpoints: ServerAPIEndpoints(production: production, sandbox: sandbox),
            roots: TrustedRoots([])
        )
    }

    @Test func verifyReceiptURLsAndTheKeyBesideThemMove() throws {
        let apple = AppleConfiguration(
            productionURL: Self.old + "/verifyReceipt",
            sandboxURL: Self.old + "/sandbox/verifyReceipt",
            sharedSecret: Secret("s"),
            bundleId: "com.example.app"
        )
        let key = try Self.settings(production: Self.old, sandbox: "https://api.storekit-sandbox.apple.com")
        let app = AppDefinition(bundleId: "com.example.app", credentials: .verifyReceipt(apple, notifications: key))
        let moved = app.movingSimulatorBase(from: Self.old, to: Self.new)
        let movedApple = try #require(moved.apple)
        #expect(movedApple.productionURL == Self.new + "/verifyReceipt")
        #expect(movedApple.sandboxURL == Self.new + "/sandbox/verifyReceipt")
        let movedKey = try #require(moved.notificationSettings)
        #expect(movedKey.endpoints.production == Self.new)
        #expect(movedKey.endpoints.sandbox == "https://api.storekit-sandbox.apple.com")
        #expect(moved.source == .verifyReceipt)
    }

    @Test func serverAPIBaseURLsMove() throws {
        let settings = try Self.settings(production: Self.old, sandbox: Self.old + "/sandbox")
        let app = AppDefinition(bundleId: "com.example.app", credentials: .serverAPI(settings))
        let moved = try #require(app.movingSimulatorBase(from: Self.old, to: Self.new).notificationSettings)
        #expect(moved.endpoints.production == Self.new)
        #expect(moved.endpoints.sandbox == Self.new + "/sandbox")
        // Another port that merely begins with the old one's digits is not the old simulator.
        let other = try Self.settings(production: Self.old + "9", sandbox: Self.old + "9/sandbox")
        let kept = AppDefinition(bundleId: "b", credentials: .serverAPI(other))
        #expect(
            kept.movingSimulatorBase(from: Self.old, to: Self.new).notificationSettings?.endpoints.production
                == Self.old + "9"
        )
    }
}
