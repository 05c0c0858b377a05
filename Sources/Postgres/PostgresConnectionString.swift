import Foundation

/// Helpers for libpq connection strings in both forms (`postgresql://user:pw@host/db?x=y` URIs
/// and `host=... password=...` key/value lists): redaction for logs and changing the database.
public enum PostgresConnectionString {
    /// The connection string with every password replaced by `***`, safe for logs.
    /// Unparseable input that mentions a password is replaced as a whole.
    public static func redacted(_ connectionString: String) -> String {
        if isURI(connectionString) {
            return redactURI(connectionString)
        }
        guard let pairs = parseKeyValue(connectionString) else {
            return connectionString.lowercased().contains("password")
                ? "<unparseable connection string>"
                : connectionString
        }
        return pairs.map { key, value in
            "\(key)=" + (key == "password" ? "***" : quote(value))
        }.joined(separator: " ")
    }

    /// The connection string pointing at database `name` instead of its current one.
    public static func replacingDatabase(in connectionString: String, with name: String) -> String {
        if isURI(connectionString) {
            let (head, query) = splitQuery(connectionString)
            guard let schemeEnd = head.range(of: "://") else { return connectionString }
            let afterScheme = head[schemeEnd.upperBound...]
            let authority = afterScheme.prefix { $0 != "/" }
            let base = String(head[..<schemeEnd.upperBound]) + authority
            let encoded = name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name
            // A dbname in the query string would override the path: drop it.
            let kept = query.map { q in
                q.split(separator: "&").filter { !$0.hasPrefix("dbname=") }.joined(separator: "&")
            }
            if let kept, !kept.isEmpty { return base + "/" + encoded + "?" + kept }
            return base + "/" + encoded
        }
        // In key/value form a later keyword overrides an earlier one.
        let trimmed = connectionString.trimmingCharacters(in: .whitespaces)
        return (trimmed.isEmpty ? "" : trimmed + " ") + "dbname=" + quote(name)
    }

    /// Every password-like secret in the string (raw and percent-decoded), used to scrub
    /// libpq messages that might echo part of the connection string.
    static func secrets(in connectionString: String) -> [String] {
        var found: [String] = []
        if isURI(connectionString) {
            let (head, query) = splitQuery(connectionString)
            if let schemeEnd = head.range(of: "://") {
                let authority = head[schemeEnd.upperBound...].prefix { $0 != "/" }
                if let at = authority.lastIndex(of: "@") {
                    let userInfo = authority[..<at]
                    if let colon = userInfo.firstIndex(of: ":") {
                        found.append(String(userInfo[userInfo.index(after: colon)...]))
                    }
                }
            }
            for item in (query ?? "").split(separator: "&") where item.hasPrefix("password=") {
                found.append(String(item.dropFirst("password=".count)))
            }
        } else if let pairs = parseKeyValue(connectionString) {
            found += pairs.filter { $0.key == "password" }.map(\.value)
        }
        found += found.compactMap { $0.removingPercentEncoding }
        return Array(Set(found.filter { !$0.isEmpty }))
    }

    /// Removes every secret of `connectionString` from `message`.
    static func scrub(_ message: String, connectionString: String) -> String {
        var result = message
        for secret in secrets(in: connectionString).sorted(by: { $0.count > $1.count }) {
            result = result.replacingOccurrences(of: secret, with: "***")
        }
        return result
    }

    // MARK: - Internals

    static func isURI(_ s: String) -> Bool {
        let lower = s.trimmingCharacters(in: .whitespaces).lowercased()
        return lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://")
    }

    private static func splitQuery(_ s: String) -> (String, String?) {
        guard let q = s.firstIndex(of: "?") else { return (s, nil) }
        return (String(s[..<q]), String(s[s.index(after: q)...]))
    }

    private static func redactURI(_ uri: String) -> String {
        let (head, query) = splitQuery(uri)
        var result = head
        if let schemeEnd = head.range(of: "://") {
            let rest = head[schemeEnd.upperBound...]
            let authority = rest.prefix { $0 != "/" }
            if let at = authority.lastIndex(of: "@") {
                let userInfo = authority[..<at]
                if let colon = userInfo.firstIndex(of: ":") {
                    result =
                        String(head[..<schemeEnd.upperBound]) + userInfo[..<colon] + ":***"
                        + authority[at...] + rest[authority.endIndex...]
                }
            }
        }
        guard let query else { return result }
        let items = query.split(separator: "&", omittingEmptySubsequences: false).map { item in
            item.hasPrefix("password=") ? "password=***" : String(item)
        }
        return result + "?" + items.joined(separator: "&")
    }

    /// Parses `key = value` pairs; values may be single-quoted with backslash escapes.
    /// Returns nil when the string is malformed.
    static func parseKeyValue(_ s: String) -> [(key: String, value: String)]? {
        var pairs: [(key: String, value: String)] = []
        let chars = Array(s)
        var i = 0
        func skipSpace() { while i < chars.count, chars[i].isWhitespace { i += 1 } }
        while true {
            skipSpace()
            if i >= chars.count { break }
            var key = ""
            while i < chars.count, chars[i] != "=", !chars[i].isWhitespace {
                key.append(chars[i])
                i += 1
            }
            skipSpace()
            guard i < chars.count, chars[i] == "=", !key.isEmpty else { return nil }
            i += 1
            skipSpace()
            var value = ""
            if i < chars.count, chars[i] == "'" {
                i += 1
                var closed = false
                while i < chars.count {
                    if chars[i] == "\\", i + 1 < chars.count {
                        value.append(chars[i + 1])
                        i += 2
                        continue
                    }
                    if chars[i] == "'" {
                        closed = true
                        i += 1
                        break
                    }
                    value.append(chars[i])
                    i += 1
                }
                guard closed else { return nil }
            } else {
                while i < chars.count, !chars[i].isWhitespace {
                    if chars[i] == "\\", i + 1 < chars.count {
                        value.append(chars[i + 1])
                        i += 2
                        continue
                    }
                    value.append(chars[i])
                    i += 1
                }
            }
            pairs.append((key, value))
        }
        return pairs
    }

    private static func quote(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.contains { $0.isWhitespace || $0 == "'" || $0 == "\\" }
        guard needsQuotes else { return value }
        return "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}

/// The connection string with its password removed (URI and key/value forms), for logs.
public func redactedConnectionString(_ connectionString: String) -> String {
    PostgresConnectionString.redacted(connectionString)
}
