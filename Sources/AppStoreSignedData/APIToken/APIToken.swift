import CivilTime
import Foundation

/// A signed App Store Server API token (`Authorization: Bearer <value>`). A secret: its `description`
/// shows only when it expires, never the token.
public struct APIToken: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The compact JWT; send it, never log it.
    public let value: String
    public let issuedAt: Date
    public let expiresAt: Date

    public var description: String { "<redacted API token, expires \(RFC3339.string(expiresAt))>" }
    public var debugDescription: String { description }
}
