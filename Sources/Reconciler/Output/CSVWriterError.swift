/// A report row whose number of values does not match the writer's columns (a programming error
/// in the caller, reported instead of writing a misaligned row).
public struct CSVWriterError: Error, Sendable, Equatable, CustomStringConvertible {
    public let expected: Int
    public let got: Int

    public var description: String { "CSV row has \(got) values, expected \(expected) (one per column)" }
}
