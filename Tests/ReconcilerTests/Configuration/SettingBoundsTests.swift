import Foundation
import Reconciler
import Testing

/// The bounds of every numeric setting (docs/operations.md, "Bounds of every numeric setting"): how a range is
/// checked and shown, that every later conversion of a value within it is safe, and that the docs list each.
@Suite struct SettingBoundsTests {
    @Test func endsAreInsideAndNaNAndInfinitiesOutside() {
        let bound = NumericBound(0.1, 100, .perSecond)
        #expect(bound.contains(0.1) && bound.contains(100) && bound.contains(50))
        #expect(!bound.contains(0.099) && !bound.contains(100.5))
        #expect(!bound.contains(Double.nan) && !bound.contains(Double.infinity) && !bound.contains(-Double.infinity))
        #expect(bound.contains(7) && !bound.contains(101))
    }

    @Test func theRangeIsShownAsAnOperatorWritesIt() {
        #expect(SettingBounds.rate.rangeText == "from 0.1 to 1000000 requests per second")
        #expect(SettingBounds.timeout.rangeText == "from 0.1 to 3600 seconds")
        #expect(SettingBounds.selectionWindow.rangeText == "from 0s to 3650d")
        #expect(SettingBounds.heartbeat.rangeText == "from 1s to 1h")
        #expect(SettingBounds.outageWindow.rangeText == "from 0s to 7d")
        #expect(NumericBound.durationText(90) == "90s")
        #expect(NumericBound.durationText(120) == "2m")
        #expect(NumericBound.durationText(Double.infinity) == "inf")
        #expect(NumericBound.numberText(1e19) == "1e+19")
    }

    @Test func theProblemNamesTheSettingTheRangeAndTheValue() {
        #expect(
            SettingBounds.maxAttempts.problem(setting: "--max-attempts", value: 1e11, shown: "100000000000")
                == "--max-attempts must be from 1 to 100, got 100000000000"
        )
        #expect(SettingBounds.maxAttempts.problem(setting: "--max-attempts", value: 5, shown: "5") == nil)
    }

    @Test func aLeaseMustLastThreeHeartbeats() {
        #expect(SettingBounds.leaseProblem(leaseSeconds: 30, heartbeatSeconds: 10) == nil)
        let problem = SettingBounds.leaseProblem(leaseSeconds: 29, heartbeatSeconds: 10)
        #expect(problem == "--lease-timeout must be at least 3 heartbeats (--heartbeat 10s: at least 30s), got 29s")
        // The smallest heartbeat and the smallest lease fit together.
        #expect(
            SettingBounds.leaseProblem(
                leaseSeconds: SettingBounds.leaseTimeout.minimum,
                heartbeatSeconds: SettingBounds.heartbeat.minimum
            ) == nil
        )
    }

    @Test func everyConversionOfAValueWithinItsBoundIsSafe() throws {
        // The largest rate: the send window's capacity and the token bucket's interval.
        let fastest = SettingBounds.rate.maximum
        #expect(SendWindow(rate: fastest).capacity == 1_000_000)
        #expect(try TokenBucket(rate: fastest).intervalNanoseconds == 1_000)
        #expect(try TokenBucket(rate: SettingBounds.rate.minimum).intervalNanoseconds == 10_000_000_000)
        // Timeouts and heartbeats in milliseconds, and Dispatch's nanoseconds.
        for seconds in [
            SettingBounds.timeout.maximum, SettingBounds.heartbeat.maximum, SettingBounds.leaseTimeout.maximum,
        ] {
            let ms = SecondsConversion.milliseconds(seconds)
            #expect(ms == Int64(seconds * 1000))
            #expect(!ms.multipliedReportingOverflow(by: 1_000_000).overflow)
        }
        // The widest selection window from an as-of time is still a PostgreSQL timestamp (before 294276 AD).
        let far = Date(timeIntervalSince1970: 4_102_444_800).addingTimeInterval(SettingBounds.selectionWindow.maximum)
        #expect(far < Date(timeIntervalSince1970: 9_224_318_016_000))
    }

    @Test func aValueFromElsewhereNeverTrapsTheConversion() {
        #expect(SecondsConversion.milliseconds(1e308) == SecondsConversion.maximumMilliseconds)
        #expect(SecondsConversion.milliseconds(Double.infinity) == SecondsConversion.maximumMilliseconds)
        #expect(SecondsConversion.milliseconds(Double.nan) == 0)
        #expect(SecondsConversion.milliseconds(-5) == 0)
        #expect(SecondsConversion.milliseconds(1.5) == 1_500)
        #expect(SendWindow(rate: 1e19).capacity == 1_000_000_000)
        #expect(SendWindow(rate: 1e308).capacity == 1_000_000_000)
    }

    @Test func bundleIdsAreComparedIgnoringASCIICase() {
        #expect(BundleIdRule.same("com.Example.News", "com.example.news"))
        #expect(!BundleIdRule.same("com.example.news", "com.example.new"))
        #expect(BundleIdRule.key("COM.EXAMPLE-1.App") == "com.example-1.app")
    }

    @Test func docsOperationsListsEveryBound() throws {
        let root = EndToEndFixture.packageRoot
        let text = try String(contentsOf: root.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        let section = try #require(
            text.components(separatedBy: "### Bounds of every numeric setting").dropFirst().first
        )
        let table = section.components(separatedBy: "\n### ")[0].split(separator: "\n")
        for (setting, bound) in SettingBounds.all {
            #expect(
                table.contains { $0.contains("`\(setting)`") && $0.contains(bound.rangeText) },
                "docs/operations.md has no row for \(setting) \(bound.rangeText)"
            )
        }
    }
}
