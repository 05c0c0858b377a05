import Foundation

/// Parses PostgreSQL's text output of one-dimensional arrays: `{a,"b \"c\"",NULL}`.
enum PostgresArrayLiteral {
    /// The elements (nil = NULL), or nil if the text is not a one-dimensional array literal.
    static func parse(_ text: String) -> [String?]? {
        var scalars = Array(text.unicodeScalars)
        // Arrays with non-default lower bounds are printed as "[0:2]={...}".
        if scalars.first == "[", let eq = scalars.firstIndex(of: "=") { scalars.removeFirst(eq + 1) }
        guard scalars.first == "{", scalars.last == "}" else { return nil }
        let body = scalars[1..<(scalars.count - 1)]
        if body.isEmpty { return [] }
        var result: [String?] = []
        var i = body.startIndex
        while true {
            var element = String.UnicodeScalarView()
            if i < body.endIndex, body[i] == "\"" {
                i += 1
                var closed = false
                while i < body.endIndex {
                    let c = body[i]
                    if c == "\\" {
                        i += 1
                        guard i < body.endIndex else { return nil }
                        element.append(body[i])
                    } else if c == "\"" {
                        closed = true
                        i += 1
                        break
                    } else {
                        element.append(c)
                    }
                    i += 1
                }
                guard closed else { return nil }
                result.append(String(element))
            } else {
                while i < body.endIndex, body[i] != "," {
                    if body[i] == "{" || body[i] == "\"" { return nil }  // nested or malformed
                    if body[i] == "\\" {
                        i += 1
                        guard i < body.endIndex else { return nil }
                    }
                    element.append(body[i])
                    i += 1
                }
                let value = String(element).trimmingCharacters(in: .whitespaces)
                result.append(value == "NULL" ? nil : value)
            }
            if i == body.endIndex { break }
            guard body[i] == "," else { return nil }
            i += 1
        }
        return result
    }
}
