/// A kind of failure the simulator can inject into verifyReceipt answers.
public enum FaultKind: String, Sendable, CaseIterable {
    case http500 = "http500"
    case http503 = "http503"
    case http429 = "429"
    case reset = "reset"
    case hang = "hang"
    case status21005 = "21005"
    case status21002 = "21002"
    case status211xx = "211xx"
    case malformedJSON = "malformed-json"
    case truncated = "truncated"
}
