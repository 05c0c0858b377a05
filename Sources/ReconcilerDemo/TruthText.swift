import Foundation

/// A value of the simulator's JSON exports as the comparisons print and compare it: a string as it is, a number
/// in its shortest form, anything else (null, absent) `null`.
enum TruthText {
    static func of(_ value: Any?) -> String {
        switch value {
        case let string as String: string
        case let number as NSNumber: number.stringValue
        default: "null"
        }
    }
}
