/// The server environment a signed payload says it comes from (`environment`).
public enum AppStoreEnvironment: String, Sendable, Hashable, CaseIterable, Codable {
    case production = "Production"
    case sandbox = "Sandbox"
    /// StoreKit testing in Xcode: not signed by Apple, so it never verifies here.
    case xcode = "Xcode"
    /// Local testing: not signed by Apple, so it never verifies here.
    case localTesting = "LocalTesting"

    /// Apple's spelling, case-insensitively.
    public init?(appleValue: String) {
        guard let found = Self.allCases.first(where: { $0.rawValue.lowercased() == appleValue.lowercased() }) else {
            return nil
        }
        self = found
    }
}
