import Crypto
import Foundation
import SwiftASN1
import Testing
import X509

@testable import AppStoreSimulator

/// The stored receipts of `purchases.jsonl` are PKCS#7 app receipts (docs/simulator.md, "Stored receipts"),
/// read here with swift-asn1's BER parser, a reader other than the simulator's own.
@Suite struct AppReceiptTests {
    static let now = SimTime.parseRFC3339("2026-11-21T03:00:00Z")!

    struct Attribute {
        var type: Int
        var value: ArraySlice<UInt8>
    }

    /// A primitive or constructed OCTET STRING's bytes.
    static func octets(_ node: ASN1Node) throws -> [UInt8] {
        switch node.content {
        case .primitive(let bytes): return Array(bytes)
        case .constructed(let segments): return try segments.flatMap { try octets($0) }
        }
    }

    static func members(_ node: ASN1Node) throws -> [ASN1Node] {
        guard case .constructed(let collection) = node.content else {
            throw ASN1Error.invalidASN1Object(reason: "not constructed")
        }
        return Array(collection)
    }

    static func attributes(_ bytes: [UInt8]) throws -> [Attribute] {
        let set = try DER.parse(bytes)
        #expect(set.identifier == .set)
        return try members(set).map { member in
            let fields = try members(member)
            #expect(fields.count == 3)
            return Attribute(type: try Int(berEncoded: fields[0]), value: try octets(fields[2])[...])
        }
    }

    static func text(_ value: ArraySlice<UInt8>) throws -> String {
        let node = try DER.parse(value)
        guard case .primitive(let bytes) = node.content else { return "" }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The payload, the signature and the signing certificate of a base64 receipt.
    static func open(_ base64: String) throws -> (payload: [UInt8], signature: [UInt8], cert: Certificate, ber: Bool) {
        let bytes = try #require(Data(base64Encoded: base64)).map { $0 }
        let root = try BER.parse(bytes)
        let info = try members(root)
        #expect(try ASN1ObjectIdentifier(berEncoded: info[0]) == [1, 2, 840, 113_549, 1, 7, 2])
        let signedData = try members(try members(info[1])[0])
        #expect(signedData.count == 5)
        let encap = try members(signedData[2])
        #expect(try ASN1ObjectIdentifier(berEncoded: encap[0]) == [1, 2, 840, 113_549, 1, 7, 1])
        let payload = try octets(try members(encap[1])[0])
        let certNode = try members(signedData[3])[0]
        let cert = try Certificate(derEncoded: Array(certNode.encodedBytes))
        let signer = try members(try members(signedData[4])[0])
        let signature = try octets(try #require(signer.last))
        return (payload, signature, cert, bytes[1] == 0x80)
    }

    @Test func storedReceiptsAreSignedPKCS7WithTheTransactionsTheAppSaw() throws {
        let pop = Population(seed: 21, subscriptions: 120, anchor: Self.now)
        let renderer = ResponseRenderer(population: pop)
        var indefinite = 0
        var checked = 0
        for family in pop.families where !family.malformedStoredReceipt {
            let opened = try Self.open(renderer.storedReceipt(family))
            if opened.ber { indefinite += 1 }
            let key = try #require(Curve25519.Signing.PublicKey(opened.cert.publicKey))
            #expect(key.isValidSignature(opened.signature, for: opened.payload))
            let attributes = try Self.attributes(opened.payload)
            let bundle = try #require(attributes.first { $0.type == 2 })
            #expect(try Self.text(bundle.value) == family.bundleId)
            let created = try #require(attributes.first { $0.type == 12 })
            #expect(try Self.text(created.value) == SimTime.rfc3339(family.storedReceiptAt / 1000 * 1000))
            #expect(attributes.first { $0.type == 5 }?.value.count == 20)
            var found: Set<String> = []
            var otids: Set<String> = []
            for record in attributes where record.type == 17 {
                let fields = try Self.attributes(Array(record.value))
                let id = try #require(fields.first { $0.type == 1703 })
                found.insert(try Self.text(id.value))
                otids.insert(try Self.text(try #require(fields.first { $0.type == 1705 }).value))
                #expect(fields.contains { $0.type == 1702 } && fields.contains { $0.type == 1708 })
            }
            let expected = family.subscriptions.flatMap { $0.timeline(at: family.storedReceiptAt).transactions }
            #expect(found == Set(expected.map { String($0.transactionId) }))
            #expect(otids.isSubset(of: Set(family.subscriptions.map { String($0.originalTransactionId) })))
            checked += 1
        }
        #expect(checked > 80)
        // A quarter in indefinite-length BER, by seed.
        #expect(indefinite > checked / 8 && indefinite < checked * 3 / 8)
    }

    @Test func appReceiptsAndPrivateReceiptsGetTheSameAnswer() throws {
        let pop = Population(seed: 22, subscriptions: 80, anchor: Self.now)
        let service = VerifyService(population: pop, sharedSecret: "sim-shared-secret", clock: .frozen(Self.now))
        let renderer = service.renderer
        var berSeen = false
        for family in pop.families {
            let stored = renderer.storedReceipt(family)
            berSeen = berSeen || Data(base64Encoded: stored)?.dropFirst().first == 0x80
            let token = renderer.receipt(
                family,
                createdAt: family.storedReceiptAt,
                issueSequence: family.storedIssueSequence
            )
            let a = service.verify(body: verifyBody(receipt: stored), sandboxPath: family.sandbox)
            let again = service.verify(body: verifyBody(receipt: stored), sandboxPath: family.sandbox)
            let b = service.verify(
                body: verifyBody(receipt: String(decoding: token, as: UTF8.self)),
                sandboxPath: family.sandbox
            )
            if family.malformedStoredReceipt {
                #expect(a.appleStatus == 21002 && b.appleStatus == 0)
                continue
            }
            #expect(a.appleStatus == b.appleStatus)
            #expect(a.body == b.body && again.body == a.body, "scenario \(family.scenario)")
        }
        #expect(berSeen)
    }

    /// The reader recognises the simulator's own signatures by signing again; whatever does not match is
    /// verified in full, so it agrees with Ed25519 verification on the receipt's signature and on altered ones.
    @Test func signatureCheckAgreesWithEd25519Verification() throws {
        let pop = Population(seed: 25, subscriptions: 40, anchor: Self.now)
        let renderer = ResponseRenderer(population: pop)
        let reader = AppReceiptReader(seed: 25)
        for family in pop.families.prefix(10) where !family.malformedStoredReceipt {
            let opened = try Self.open(renderer.storedReceipt(family))
            #expect(reader.isAuthentic(signature: opened.signature, payload: opened.payload))
            for index in [0, 31, 32, 63] {
                var altered = opened.signature
                altered[index] ^= 0x01
                let valid = reader.publicKey.isValidSignature(altered, for: opened.payload)
                #expect(reader.isAuthentic(signature: altered, payload: opened.payload) == valid)
                #expect(!valid)
            }
            #expect(!reader.isAuthentic(signature: Array(opened.signature.prefix(63)), payload: opened.payload))
            #expect(!reader.isAuthentic(signature: opened.signature, payload: opened.payload + [0]))
        }
    }

    @Test func tamperedOrForeignAppReceiptsAreUnauthenticatedAndGarbageMalformed() throws {
        let pop = Population(seed: 23, subscriptions: 60, anchor: Self.now)
        let renderer = ResponseRenderer(population: pop)
        for family in pop.families.prefix(8) where !family.malformedStoredReceipt {
            let stored = Array(renderer.storedReceipt(family).utf8)
            guard case .valid(let token) = renderer.codec.decode(stored) else {
                Issue.record("own app receipt did not decode (\(family.scenario))")
                continue
            }
            #expect(token.familyIndex == UInt32(family.index) && token.createdAt == family.storedReceiptAt)
            #expect(token.issueSequence == family.storedIssueSequence && token.sandbox == family.sandbox)
            // Another seed's key did not sign it.
            #expect(ReceiptCodec(seed: 24).decode(stored) == .unauthenticated)
            // One changed byte in the signed content (a product id or date): the signature no longer matches.
            var bytes = try #require(Data(base64Encoded: Data(stored))).map { $0 }
            let needles = [family.bundleId, SimTime.rfc3339(family.storedReceiptAt / 1000 * 1000)].map {
                Array($0.utf8)
            }
            let at = try #require(
                needles.lazy.compactMap { needle in
                    bytes.indices.dropLast(needle.count).first { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
                }.first
            )
            bytes[at + 1] ^= 0x01
            let tampered = Base64.encode(bytes)
            #expect(renderer.codec.decode(tampered) == .unauthenticated)
            // Cut short: not a whole PKCS#7 value.
            #expect(renderer.codec.decode(Base64.encode(Array(bytes.prefix(bytes.count / 2)))) == .malformed)
        }
        #expect(renderer.codec.decode(Base64.encode([0x30, 0x80, 0x00])) == .malformed)
        #expect(renderer.codec.decode(Base64.encode([0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF])) == .malformed)
    }
}
