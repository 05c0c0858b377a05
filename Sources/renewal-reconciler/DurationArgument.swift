import ArgumentParser
import Foundation

/// Parses durations like `24h`, `60d`, `30m`, `90s`, `1w` (or plain seconds).
struct DurationArgument: ExpressibleByArgument, Sendable, CustomStringConvertible {
    let seconds: Double
    let text: String

    init?(argument: String) {
        let trimmed = argument.trimmingCharacters(in: .whitespaces).lowercased()
        guard let unit = trimmed.last else { return nil }
        let multipliers: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604_800]
        if let m = multipliers[unit], let value = Double(trimmed.dropLast()), value >= 0 {
            seconds = value * m
        } else if let value = Double(trimmed), value >= 0 {
            seconds = value
        } else {
            return nil
        }
        text = argument
    }

    var description: String { text }
    var defaultValueDescription: String { text }
}

/// A comma-separated list of durations (`1d,2d,4d,8d,16d,30d`), each greater than zero.
struct DurationListArgument: ExpressibleByArgument, Sendable, CustomStringConvertible {
    let seconds: [Double]
    let text: String

    init?(argument: String) {
        var seconds: [Double] = []
        for part in argument.split(separator: ",", omittingEmptySubsequences: false) {
            guard let duration = DurationArgument(argument: String(part)), duration.seconds > 0 else { return nil }
            seconds.append(duration.seconds)
        }
        guard !seconds.isEmpty else { return nil }
        self.seconds = seconds
        text = argument
    }

    var description: String { text }
    var defaultValueDescription: String { text }
}
