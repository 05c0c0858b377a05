/// Which verifyReceipt endpoint a receipt belongs to (and a request went to).
///
/// Raw values are Apple's spelling in the `environment` response field.
public enum AppleEnvironment: String, Sendable, Hashable, CaseIterable, Codable {
    case production = "Production"
    case sandbox = "Sandbox"

    /// Parses Apple's spelling, case-insensitively (`Production`, `sandbox`, ...).
    public init?(appleValue: String) {
        switch appleValue.lowercased() {
        case "production": self = .production
        case "sandbox": self = .sandbox
        default: return nil
        }
    }

    /// The other endpoint (what 21007/21008 ask us to switch to).
    public var other: AppleEnvironment { self == .production ? .sandbox : .production }
}
