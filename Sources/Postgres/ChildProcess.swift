import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a command to completion with posix_spawn (usable from atexit and signal handlers,
/// unlike Foundation.Process), stdin from /dev/null and stdout+stderr appended to a log file.
struct ChildProcess: Sendable {
    let executable: String
    let arguments: [String]
    /// When set (we are root), the command runs as this user through `runuser -u USER --`.
    let runAsUser: String?
    let environment: [String]

    /// Runs the command; returns its exit status (-1 if it could not be started or was killed)
    /// and the last few kilobytes of its output.
    func run(logFile: String) -> (status: Int32, output: String) {
        var path = executable
        var argv = [executable] + arguments
        if let user = runAsUser {
            let runuser = ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"].first {
                FileManager.default.isExecutableFile(atPath: $0)
            }
            if let runuser {
                path = runuser
                argv = [runuser, "-u", user, "--"] + argv
            } else {
                path = "/bin/su"
                let command = "exec " + argv.map(Self.shellQuote).joined(separator: " ")
                argv = ["/bin/su", user, "-s", "/bin/sh", "-c", command]
            }
        }
        let startOffset = (try? FileManager.default.attributesOfItem(atPath: logFile)[.size] as? Int) ?? 0
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logFile, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        #if canImport(Glibc)
        // Do not leak the caller's descriptors (test servers, sockets) into a long-lived postmaster.
        // glibc >= 2.34 has it, but Swift's Glibc module does not export it: look it up.
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }
        #endif
        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in cArgs { free(pointer) }
            for pointer in cEnv { free(pointer) }
        }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, path, &actions, nil, cArgs, cEnv)
        guard spawned == 0 else {
            return (-1, "could not start \(path): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            if errno != EINTR { return (-1, "waitpid failed: \(String(cString: strerror(errno)))") }
        }
        let exited = status & 0x7f == 0
        let output = Self.tail(of: logFile, from: startOffset)
        return (exited ? (status >> 8) & 0xff : -1, output)
    }

    private static func tail(of file: String, from offset: Int) -> String {
        guard let data = FileManager.default.contents(atPath: file), data.count > offset else { return "" }
        let text = String(decoding: data[offset...], as: UTF8.self)
        return String(text.suffix(4000)).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    #if canImport(Glibc)
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addCloseFrom: AddCloseFrom? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()
    #endif

    static func shellQuote(_ s: String) -> String {
        "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
