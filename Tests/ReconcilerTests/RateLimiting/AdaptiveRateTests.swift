import Testing

@testable import Reconciler

@Suite struct AdaptiveRateTests {
    private let second: UInt64 = 1_000_000_000

    @Test func defaultsFollowConfiguredRate() throws {
        let controller = try AdaptiveRateController(configuredRate: 100)
        #expect(controller.currentRate == 100)
        #expect(controller.minimumRate == 5)
        #expect(controller.recoveryStep == 10)
        #expect(try AdaptiveRateController(configuredRate: 10).minimumRate == 1)
        #expect(try AdaptiveRateController(configuredRate: 0.5).minimumRate == 0.5)
    }

    @Test func singleThrottleDoesNotCutButRepeatedDoes() throws {
        var controller = try AdaptiveRateController(configuredRate: 40)
        #expect(controller.record(.throttled, now: 1 * second) == 40)
        #expect(controller.record(.success, now: 2 * second) == 40)
        #expect(controller.record(.throttled, now: 3 * second) == 20)
    }

    @Test func throttlesOutsideTheWindowDoNotAccumulate() throws {
        var controller = try AdaptiveRateController(configuredRate: 40, throttleWindow: .seconds(10))
        #expect(controller.record(.throttled, now: 0) == 40)
        #expect(controller.record(.throttled, now: 11 * second) == 40)
        #expect(controller.record(.throttled, now: 12 * second) == 20)
    }

    @Test func aBurstOfThrottlesCutsOncePerWindowAndStopsAtFloor() throws {
        var controller = try AdaptiveRateController(configuredRate: 40, minimumRate: 4)
        var now = second
        for _ in 0..<50 { controller.record(.throttled, now: now) }
        #expect(controller.currentRate == 20)
        for _ in 0..<10 {
            now += 10 * second
            controller.record(.throttled, now: now)
            controller.record(.throttled, now: now + 1)
        }
        #expect(controller.currentRate == 4)
    }

    @Test func sustainedSuccessRecoversGraduallyButNeverAboveConfigured() throws {
        var controller = try AdaptiveRateController(
            configuredRate: 10,
            throttleThreshold: 1,
            recoveryInterval: .seconds(5),
            recoveryStep: 2
        )
        #expect(controller.record(.throttled, now: 0) == 5)
        // Successes within the quiet interval change nothing.
        #expect(controller.record(.success, now: 4 * second) == 5)
        #expect(controller.record(.success, now: 5 * second) == 7)
        #expect(controller.record(.success, now: 6 * second) == 7)
        #expect(controller.record(.success, now: 10 * second) == 9)
        #expect(controller.record(.success, now: 15 * second) == 10)
        #expect(controller.record(.success, now: 60 * second) == 10)
    }

    @Test func throttlingDuringRecoveryRestartsTheQuietInterval() throws {
        var controller = try AdaptiveRateController(
            configuredRate: 10,
            throttleThreshold: 2,
            recoveryInterval: .seconds(5),
            recoveryStep: 1
        )
        controller.record(.throttled, now: 0)
        #expect(controller.record(.throttled, now: 1) == 5)
        // A lone throttle (below threshold) does not cut, but postpones recovery.
        #expect(controller.record(.throttled, now: 20 * second) == 5)
        #expect(controller.record(.success, now: 24 * second) == 5)
        #expect(controller.record(.success, now: 25 * second) == 6)
    }

    @Test func rejectsBadConfiguration() {
        #expect(throws: RateLimitConfigurationError.self) { try AdaptiveRateController(configuredRate: 0) }
        #expect(throws: RateLimitConfigurationError.self) {
            try AdaptiveRateController(configuredRate: 10, minimumRate: 11)
        }
        #expect(throws: RateLimitConfigurationError.self) {
            try AdaptiveRateController(configuredRate: 10, decreaseFactor: 1)
        }
        #expect(throws: RateLimitConfigurationError.self) {
            try AdaptiveRateController(configuredRate: 10, throttleThreshold: 0)
        }
        #expect(throws: RateLimitConfigurationError.self) {
            try AdaptiveRateController(configuredRate: 10, recoveryInterval: .zero)
        }
    }
}
