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
