import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Children started together from many tasks (docs/testing.md, "One command"): none holds a descriptor of the
/// test process or of a sibling, and a child killed with SIGKILL is seen to end while its siblings still run.
@Suite struct ChildProcessTests {
    /// Descriptors left open without close-on-exec, as a library of the test process might (Foundation's `Process`
    /// handed such descriptors from one child to the next when they were spawned at the same time).
    static func strayDescriptors() -> [Int32] {
        var pair: [Int32] = [-1, -1]
        _ = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair)
        return pair + (0..<64).map { _ in open("/dev/null", O_RDONLY) }
    }

    @Test func aChildHoldsOnlyItsStandardDescriptors() async throws {
        let stray = Self.strayDescriptors()
        defer { for fd in stray { close(fd) } }
        let listings = try await withThrowingTaskGroup(of: ChildProcessOutcome.self) { group in
            for _ in 0..<16 {
                group.addTask { try await ChildProcess.run("/bin/ls", ["/proc/self/fd"]) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for listing in listings {
            #expect(listing.status == 0, "\(listing)")
            // 3 is the directory ls itself reads.
            #expect(Set(listing.stdout.split(separator: "\n")) == ["0", "1", "2", "3"], "\(listing.stdout)")
        }
    }

    @Test func aChildKilledWithSIGKILLIsSeenToEndWhileItsSiblingsRun() async throws {
        let stray = Self.strayDescriptors()
        defer { for fd in stray { close(fd) } }
        let children = try await withThrowingTaskGroup(of: ChildProcess.self) { group in
            for _ in 0..<16 {
                group.addTask { try await ChildProcess("/bin/sleep", ["600"]) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        defer { for child in children { child.signal(SIGKILL) } }
        for (index, child) in children.enumerated() {
            child.signal(SIGKILL)
            // A safety net far above the milliseconds it takes: Foundation's exit notice could wait for a sibling.
            let deadline = ContinuousClock.now + .seconds(60)
            while !child.hasExited && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            #expect(child.hasExited, "child \(index) of \(children.count) not seen to end")
            let outcome = await child.outcome()
            #expect(outcome.killedBySIGKILL, "\(outcome)")
        }
    }
}
