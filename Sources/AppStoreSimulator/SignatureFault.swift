/// A signature defect the simulator can put into Server API answers (docs/simulator.md, "Faults"): every JWS
/// of the answer is affected. A client must refuse such an answer and leave the subscription untouched.
public enum SignatureFault: String, Sendable, CaseIterable {
    /// Signed by a chain that looks like the population's (same subjects) but ends at another root.
    case foreignChain = "foreign-chain"
    /// Signed by a leaf under the right intermediate that lacks 1.2.840.113635.100.6.11.1.
    case leafWithoutOID = "leaf-without-oid"
    /// Signed by a leaf under the right intermediate that expired years before `signedDate`.
    case expiredLeaf = "expired-leaf"
    /// Signed correctly, then the payload was changed (`expiresDate` pushed to 2100): the signature fails.
    case tamperedPayload = "tampered-payload"
}

extension SignatureFault {
    /// The fault every Server API answer about `originalTransactionId` carries when a share `rate` of the
    /// subscriptions is faulty (`--signature-faulty-subscriptions`): chosen by a hash of the seed and the id,
    /// the kind cycling through the four; nil for the others. `export` lists the same ones.
    public static func forSubscription(_ originalTransactionId: UInt64, seed: UInt64, rate: Double) -> SignatureFault? {
        guard rate > 0 else { return nil }
        let h = SeededRandom.hash(seed, 0x5F5B, originalTransactionId)
        guard SeededRandom.unit(h) < rate else { return nil }
        return allCases[Int(SeededRandom.mix(h) % UInt64(allCases.count))]
    }

    /// The fault of a customer's answers: the first faulty subscription's (answers such as history cover every
    /// subscription of the customer, so all of them are refused).
    public static func forFamily(_ family: ReceiptFamily, seed: UInt64, rate: Double) -> SignatureFault? {
        guard rate > 0 else { return nil }
        return family.subscriptions.lazy.compactMap {
            forSubscription($0.originalTransactionId, seed: seed, rate: rate)
        }.first
    }
}
