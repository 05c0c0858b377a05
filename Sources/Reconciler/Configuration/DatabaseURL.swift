import Foundation

/// Helpers for libpq connection strings (URI `postgresql://user:pw@host/db?...` or `key=value` form).
public enum DatabaseURL {
    /// True when the connection string carries a password (URI userinfo, `?password=` or `password=`).
    public static func containsPassword(_ connection: String) -> Bool {
        let trimmed = connection.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("postgres://") || trimmed.hasPrefix("postgresql://") {
            if let components = URLComponents(string: trimmed) {
                if let pw = components.password, !pw.isEmpty { return true }
                if components.queryItems?.contains(where: { $0.name == "password" }) == true { return true }
                return false
            }
            // Not parseable by Foundation: be conservative.
            let afterScheme = trimmed.split(separator: "/", maxSplits: 3).dropFirst().first ?? ""
            return afterScheme.contains(":") && afterScheme.contains("@") || trimmed.contains("password=")
        }
        return trimmed.range(of: #"(^|\s)password\s*="#, options: .regularExpression) != nil
    }
}
