import Testing

@testable import CivilTime

@Suite struct DurationUnitsTests {
    @Test func conversionsClampAndNeverTrap() {
        #expect(Duration.milliseconds(1500).clampedNanoseconds == 1_500_000_000)
        #expect(Duration.milliseconds(1500).clampedMilliseconds == 1500)
        #expect(Duration.milliseconds(-5).clampedNanoseconds == 0)
        #expect(Duration.zero.clampedMilliseconds == 0)
        #expect(Duration.seconds(Int64.max).clampedNanoseconds == UInt64.max)
        #expect(Duration.seconds(Int64.max).clampedMilliseconds == Int(Int32.max))
        #expect(Duration.milliseconds(2500).seconds == 2.5)
    }
}
