import Foundation
import ReceiptDomain

/// One fixture scenario: a response body file plus its `*.expect.json` sidecar.
struct Scenario: Sendable, CustomStringConvertible {
    let name: String
    let sidecar: SidecarJSON
    let body: [UInt8]?

    var description: String { name }

    static var fixturesDirectory: URL {
        get throws {
            guard let url = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else {
                throw ScenarioError(message: "Fixtures directory missing from the test bundle")
            }
            return url
        }
    }

    /// Names of every scenario (files ending in `.expect.json`), sorted.
    static func allNames() -> [String] {
        guard let directory = try? fixturesDirectory,
            let files = try? FileManager.default.contentsOfDirectory(atPath: directory.path)
        else { return [] }
        return files.filter { $0.hasSuffix(".expect.json") }.map { String($0.dropLast(".expect.json".count)) }.sorted()
    }

    static func load(_ name: String) throws -> Scenario {
        let directory = try fixturesDirectory
        let sidecarData = try Data(contentsOf: directory.appendingPathComponent(name + ".expect.json"))
        let sidecar = try JSONDecoder().decode(SidecarJSON.self, from: sidecarData)
        var body: [UInt8]?
        if let file = sidecar["body"]?.string {
            body = Array(try Data(contentsOf: directory.appendingPathComponent(file)))
        }
        return Scenario(name: name, sidecar: sidecar, body: body)
    }

    static func fixtureBytes(_ file: String) throws -> [UInt8] {
        Array(try Data(contentsOf: try fixturesDirectory.appendingPathComponent(file)))
    }

    var now: Date {
        get throws {
            guard let text = sidecar["now"]?.string, let date = SidecarJSON.date(text) else {
                throw ScenarioError(message: "\(name): sidecar has no readable `now`")
            }
            return date
        }
    }

    var requestedEnvironment: AppleEnvironment {
        sidecar["requested_environment"]?.string.flatMap(AppleEnvironment.init(rawValue:)) ?? .production
    }

    var transport: TransportFailure? {
        switch sidecar["transport"]?.string {
        case nil: nil
        case "timeout": .timeout
        case "connectionFailed": .connectionFailed
        case "connectionReset": .connectionReset
        case "responseTooLarge": .responseTooLarge
        case "tls": .tls
        case let other?: .other(other)
        }
    }

    func header(_ name: String) -> String? {
        guard case .object(let headers)? = sidecar["headers"] else { return nil }
        return headers.first { $0.key.lowercased() == name.lowercased() }?.value.string
    }

    /// The stored row described by the sidecar, if any.
    var stored: StoredSubscription? {
        get throws {
            guard let row = sidecar["stored"] else { return nil }
            guard let otid = row["original_transaction_id"]?.string, let product = row["product_id"]?.string else {
                throw ScenarioError(message: "\(name): stored row needs original_transaction_id and product_id")
            }
            func date(_ key: String) -> Date? { row[key]?.string.flatMap(SidecarJSON.date) }
            return StoredSubscription(
                originalTransactionId: otid,
                userId: "user-1",
                productId: product,
                bundleId: row["bundle_id"]?.string,
                environment: row["environment"]?.string.flatMap(AppleEnvironment.init(rawValue:)),
                expiresAt: date("expires_at"),
                state: row["state"]?.string.flatMap(SubscriptionState.init(rawValue:)),
                autoRenew: row["auto_renew"]?.bool,
                autoRenewProductId: row["auto_renew_product_id"]?.string,
                gracePeriodExpiresAt: date("grace_period_expires_at"),
                latestTransactionId: row["latest_transaction_id"]?.string,
                revokedAt: date("revoked_at"),
                expirationIntent: row["expiration_intent"]?.int,
                inBillingRetry: row["in_billing_retry"]?.bool
            )
        }
    }
}

struct ScenarioError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
