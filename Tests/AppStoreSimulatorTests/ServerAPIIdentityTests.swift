import Crypto
import Foundation
import Testing
import X509

@testable import AppStoreSimulator

@Suite struct ServerAPIIdentityTests {
    static let anchor = PopulationTests.now

    @Test func sameSeedSameIdentityOtherSeedOther() throws {
        let a = ServerAPIIdentity(seed: 42, anchor: Self.anchor, bundleId: "com.example.renewals")
        let b = ServerAPIIdentity(seed: 42, anchor: Self.anchor, bundleId: "com.example.renewals")
        let c = ServerAPIIdentity(seed: 43, anchor: Self.anchor, bundleId: "com.example.renewals")
        #expect(a.keyId == b.keyId && a.issuerId == b.issuerId && a.appAppleId == b.appAppleId)
        #expect(a.apiKey.rawRepresentation == b.apiKey.rawRepresentation)
        #expect(a.apiJSON() == b.apiJSON())
        for (x, y) in [(a.root, b.root), (a.intermediate, b.intermediate), (a.leaf, b.leaf)] {
            #expect(x.subject == y.subject && x.issuer == y.issuer && x.serialNumber == y.serialNumber)
            #expect(x.notValidBefore == y.notValidBefore && x.notValidAfter == y.notValidAfter)
            #expect(x.publicKey == y.publicKey)
        }
        #expect(a.keyId != c.keyId && a.issuerId != c.issuerId)
        #expect(a.apiKey.rawRepresentation != c.apiKey.rawRepresentation)
        #expect(a.root.publicKey != c.root.publicKey && a.leaf.subject != c.leaf.subject)
        #expect(a.keyId.count == 10 && a.keyId.allSatisfy { $0.isUppercase || $0.isNumber })
        #expect(UUID(uuidString: a.issuerId) != nil)
    }

    @Test func validityCoversThePopulation() throws {
        let identity = ServerAPIIdentity(seed: 7, anchor: Self.anchor, bundleId: "com.example.renewals")
        let population = Population(seed: 7, subscriptions: 400, anchor: Self.anchor)
        var earliest = Int64.max
        var latest = Int64.min
        for family in population.families {
            for plan in family.subscriptions {
                for t in plan.timeline(at: Self.anchor).transactions {
                    earliest = min(earliest, t.originalPurchase)
                    latest = max(latest, t.expires)
                }
            }
        }
        for cert in [identity.root, identity.intermediate, identity.leaf] {
            #expect(cert.notValidBefore.timeIntervalSince1970 * 1000 < Double(earliest))
            #expect(cert.notValidAfter.timeIntervalSince1970 * 1000 > Double(latest))
        }
    }

    @Test func exportWritesRootKeyAndIDs() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sim-api-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let population = Population(seed: 5, subscriptions: 20, anchor: Self.anchor)
        _ = try PopulationExporter(population: population).export(to: dir, now: Self.anchor)
        let identity = ServerAPIIdentity(seed: 5, anchor: Self.anchor, bundleId: population.bundleId)

        let apiData = try Data(contentsOf: URL(fileURLWithPath: dir + "/server-api/api.json"))
        let api = try #require(try JSONSerialization.jsonObject(with: apiData) as? [String: Any])
        #expect(Set(api.keys) == ["key_id", "issuer_id", "bundle_id", "app_apple_id", "team_key_id", "vendor_number"])
        #expect(api["team_key_id"] as? String == identity.teamKeyId && identity.teamKeyId != identity.keyId)
        #expect(api["vendor_number"] as? String == identity.vendorNumber)
        #expect(api["key_id"] as? String == identity.keyId)
        #expect(api["issuer_id"] as? String == identity.issuerId)
        #expect(api["bundle_id"] as? String == "com.example.renewals")
        #expect((api["app_apple_id"] as? NSNumber)?.int64Value == identity.appAppleId)

        let p8 = try String(contentsOfFile: dir + "/server-api/key.p8", encoding: .utf8)
        #expect(p8.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let key = try P256.Signing.PrivateKey(pemRepresentation: p8)
        #expect(key.publicKey.rawRepresentation == identity.apiKey.publicKey.rawRepresentation)
        let mode = try FileManager.default.attributesOfItem(atPath: dir + "/server-api/key.p8")[.posixPermissions]
        #expect((mode as? NSNumber)?.intValue == 0o600)
        // The team's App Store Connect key (report downloads): another key, also 0600.
        let team = try P256.Signing.PrivateKey(
            pemRepresentation: try String(contentsOfFile: dir + "/server-api/team-key.p8", encoding: .utf8)
        )
        #expect(team.publicKey.rawRepresentation == identity.teamKey.publicKey.rawRepresentation)
        #expect(team.publicKey.rawRepresentation != key.publicKey.rawRepresentation)
        let teamMode = try FileManager.default.attributesOfItem(atPath: dir + "/server-api/team-key.p8")[
            .posixPermissions
        ]
        #expect((teamMode as? NSNumber)?.intValue == 0o600)

        let rootPEM = try String(contentsOfFile: dir + "/server-api/root.pem", encoding: .utf8)
        let root = try Certificate(pemEncoded: rootPEM)
        #expect(root.subject == identity.root.subject && root.issuer == root.subject)
        #expect(root.publicKey == identity.root.publicKey)

        // A payload signed by the population's chain verifies against the exported root alone.
        let verifier = try TestJWSVerifier(rootPEM: rootPEM)
        let signedDate = Self.anchor
        let jws = identity.sign(payload: Array(#"{"signedDate":\#(signedDate),"transactionId":"1"}"#.utf8))
        let payload = try await verifier.verify(jws)
        #expect(payload["transactionId"] as? String == "1")
    }

    @Test func jwsShapeAndTamperingIsRefused() async throws {
        let identity = ServerAPIIdentity(seed: 9, anchor: Self.anchor, bundleId: "com.example.renewals")
        let jws = identity.sign(payload: Array(#"{"signedDate":\#(Self.anchor),"price":1990}"#.utf8))
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        #expect(!jws.contains("=") && !jws.contains("+") && !jws.contains("/"))
        let headerBytes = try #require(TestJWSVerifier.base64URL(parts[0]))
        let header = try #require(try JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any])
        #expect(header["alg"] as? String == "ES256")
        let x5c = try #require(header["x5c"] as? [String])
        #expect(x5c.count == 3)
        let leafDER = try #require(Data(base64Encoded: x5c[0]))
        let leaf = try Certificate(derEncoded: Array(leafDER))
        #expect(leaf.subject == identity.leaf.subject)
        #expect(TestJWSVerifier.base64URL(parts[2])?.count == 64)

        let verifier = try TestJWSVerifier(rootPEM: identity.rootPEM)
        _ = try await verifier.verify(jws)
        let forged =
            parts[0] + "." + Base64URL.encodeString(Array(#"{"signedDate":\#(Self.anchor),"price":1}"#.utf8))
            + "." + parts[2]
        await #expect(throws: TestJWSVerifier.Refusal.self) { _ = try await verifier.verify(forged) }
        let other = ServerAPIIdentity(seed: 10, anchor: Self.anchor, bundleId: "com.example.renewals")
        let foreign = other.sign(payload: Array(#"{"signedDate":\#(Self.anchor)}"#.utf8))
        await #expect(throws: TestJWSVerifier.Refusal.self) { _ = try await verifier.verify(foreign) }
    }
}
