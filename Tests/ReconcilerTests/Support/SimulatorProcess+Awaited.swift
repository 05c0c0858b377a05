import Foundation
import ReconcilerDemo
import TestSupport

/// The simulator's start and export awaited: `SimulatorProcess` waits for the port inside its init and for the
/// export's exit, so both run on a thread of their own (`OffPool`), never on one of the test pool's.
extension SimulatorProcess {
    static func started(
        binary: String,
        arguments: [String],
        sharedSecret: String
    ) async throws -> SimulatorProcess {
        try await OffPool.run {
            try SimulatorProcess(
                binary: binary,
                arguments: arguments,
                sharedSecret: sharedSecret
            )
        }
    }

    static func exported(
        binary: String,
        seed: UInt64,
        subscriptions: Int,
        now: Date,
        into directory: String,
        extra: [String] = []
    ) async throws {
        try await OffPool.run {
            try SimulatorProcess.export(
                binary: binary,
                seed: seed,
                subscriptions: subscriptions,
                now: now,
                into: directory,
                extra: extra
            )
        }
    }

    /// Stops the simulator (`stop()` waits for its exit) on a thread of its own.
    func stopped() async {
        _ = try? await OffPool.run { self.stop() }
    }
}
