import ArgumentParser
import Reconciler

/// Checks a flag's value against its bound of `SettingBounds` in a command's `validate()`: a value outside it is a
/// usage error (exit 64) naming the flag, its allowed range and the value given, before any run exists
/// (docs/operations.md, "Bounds of every numeric setting").
extension NumericBound {
    func validate(_ value: Double, flag: String) throws {
        if let problem = problem(setting: flag, value: value, shown: NumericBound.numberText(value)) {
            throw ValidationError(problem)
        }
    }

    func validate(_ value: Int, flag: String) throws {
        if let problem = problem(setting: flag, value: Double(value), shown: String(value)) {
            throw ValidationError(problem)
        }
    }

    func validate(_ value: DurationArgument, flag: String) throws {
        if let problem = problem(setting: flag, value: value.seconds, shown: value.text) {
            throw ValidationError(problem)
        }
    }
}
