/// A value read from the database that this version does not know (written by a newer version, or by hand): named
/// with its column, never guessed at.
struct UnknownStoredValueError: Error, CustomStringConvertible {
    let column: String
    let value: String

    var description: String {
        "\(column) holds \"\(value.prefix(40))\", which this version of renewal-reconciler does not know"
    }
}
