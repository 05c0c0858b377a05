import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private PostgreSQL cluster in a temporary directory, for tests and demos: `initdb`,
/// `pg_ctl start` on 127.0.0.1 (free port) and a Unix socket in the directory, fsync off.
/// `stop()` stops it and deletes the directory; so do process exit (atexit) and SIGINT/SIGTERM.
/// As root, `initdb`/`pg_ctl` run as the `postgres` user (PostgreSQL refuses to run as root).
///
/// `@unchecked Sendable`: the only mutable state (`stopped`) is behind a `Mutex`; the rest is
/// immutable after `init`.
public final class ThrowawayPostgres: @unchecked Sendable {
    /// TCP URL for the superuser `postgres` and database `postgres`, e.g.
    /// `postgresql://postgres@127.0.0.1:54321/postgres`.
    public let url: String
    /// Key/value connection string using the Unix socket in `directory`.
    public let socketConnectionString: String
    public let port: Int
    /// The temporary directory (data directory, socket and logs live inside it).
    public let directory: String
    /// The directory holding `initdb`, `pg_ctl` and `postgres`.
    public let binDirectory: String

    private let control: ClusterControl
    private let stopped = Mutex<Bool>(false)

    /// Creates and starts the cluster.
    /// - Parameter installSignalHandlers: stop every throwaway cluster on SIGINT/SIGTERM
    ///   (then re-raise the signal). Pass false if the process handles those signals itself.
    public init(installSignalHandlers: Bool = true) throws {
        let runAs = geteuid() == 0 ? "postgres" : nil
        let environment = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        let root = try Self.makeTemporaryDirectory(owner: runAs)
        let log = root + "/commands.log"
        do {
            let bin = try Self.findBinDirectory(environment: environment, log: log)
            let data = root + "/data"
            let initdb = ChildProcess(
                executable: bin + "/initdb",
                arguments: [
                    "-D", data, "-A", "trust", "-U", "postgres", "--encoding=UTF8", "--locale=C", "--no-sync",
                ],
                runAsUser: runAs,
                environment: environment
            )
            let (status, output) = initdb.run(logFile: log)
            guard status == 0 else {
                throw PostgresError(code: .cluster, message: "initdb failed (exit \(status)): \(output)")
            }
            var lastError: PostgresError?
            for _ in 0..<3 {  // another process may grab the free port before the server binds it
                let port = try Self.freePort()
                try Self.writeSettings(dataDirectory: data, port: port, socketDirectory: root)
                let control = ClusterControl(
                    pgCtl: bin + "/pg_ctl",
                    dataDirectory: data,
                    rootDirectory: root,
                    runAsUser: runAs,
                    environment: environment
                )
                let (status, output) = control.pgCtl(["-l", root + "/server.log", "-w", "-t", "60", "start"])
                if status == 0 {
                    self.port = port
                    self.directory = root
                    self.binDirectory = bin
                    self.control = control
                    self.url = "postgresql://postgres@127.0.0.1:\(port)/postgres"
                    self.socketConnectionString = "host=\(root) port=\(port) user=postgres dbname=postgres"
                    ThrowawayRegistry.register(control, installSignalHandlers: installSignalHandlers)
                    return
                }
                let serverLog = (try? String(contentsOfFile: root + "/server.log", encoding: .utf8)) ?? ""
                lastError = PostgresError(
                    code: .cluster,
                    message: "pg_ctl start failed (exit \(status)): \(output) \(String(serverLog.suffix(2000)))"
                )
            }
            throw lastError ?? PostgresError(code: .cluster, message: "pg_ctl start failed")
        } catch {
            _ = ChildProcess(executable: "/bin/rm", arguments: ["-rf", root], runAsUser: nil, environment: environment)
                .run(logFile: "/dev/null")
            throw error
        }
    }

    deinit { stop() }

    /// Stops the server (immediate mode) and deletes the directory. Idempotent.
    public func stop() {
        let wasStopped = stopped.withLock { value in
            defer { value = true }
            return value
        }
        guard !wasStopped else { return }
        ThrowawayRegistry.unregister(control)
        control.stopAndRemove()
    }

    /// Restarts the server (fast mode: open connections are terminated), e.g. to test reconnects.
    public func restart() throws {
        let (status, output) = control.pgCtl([
            "-l", directory + "/server.log", "-m", "fast", "-w", "-t", "60", "restart",
        ])
        guard status == 0 else {
            throw PostgresError(code: .cluster, message: "pg_ctl restart failed (exit \(status)): \(output)")
        }
    }

    /// Stops the server without deleting anything (for tests of "server went away"); `restart()` is
    /// the usual counterpart, or `startAgain()`.
    public func stopServer() throws {
        let (status, output) = control.pgCtl(["-m", "fast", "-w", "stop"])
        guard status == 0 else {
            throw PostgresError(code: .cluster, message: "pg_ctl stop failed (exit \(status)): \(output)")
        }
    }

    /// Starts the server again after `stopServer()`.
    public func startAgain() throws {
        let (status, output) = control.pgCtl(["-l", directory + "/server.log", "-w", "-t", "60", "start"])
        guard status == 0 else {
            throw PostgresError(code: .cluster, message: "pg_ctl start failed (exit \(status)): \(output)")
        }
    }

    /// Creates database `name` and returns its TCP URL.
    public func createDatabase(_ name: String) throws -> String {
        let admin = try PostgresConnection(url)
        defer { admin.close() }
        let quoted = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        try admin.execute("CREATE DATABASE " + quoted)
        return PostgresConnectionString.replacingDatabase(in: url, with: name)
    }

    // MARK: - Setup helpers

    private static func makeTemporaryDirectory(owner: String?) throws -> String {
        // As root, use /tmp: postgres must be able to reach the directory, and socket paths are short.
        let base = owner == nil ? (ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp") : "/tmp"
        var template =
            Array((base.hasSuffix("/") ? base : base + "/").utf8CString.dropLast())
            + Array("throwaway-pg.XXXXXX".utf8CString)
        guard let result = mkdtemp(&template) else {
            throw PostgresError(
                code: .cluster,
                message: "could not create a temporary directory in \(base): \(String(cString: strerror(errno)))"
            )
        }
        let path = String(cString: result)
        if let owner {
            guard let pw = getpwnam(owner) else {
                rmdir(path)
                throw PostgresError(
                    code: .cluster,
                    message:
                        "running as root but there is no '\(owner)' user to run PostgreSQL as (apt-get install postgresql creates it)"
                )
            }
            guard chown(path, pw.pointee.pw_uid, pw.pointee.pw_gid) == 0 else {
                rmdir(path)
                throw PostgresError(code: .cluster, message: "could not chown \(path) to \(owner)")
            }
        }
        return path
    }

    /// `$PG_BINDIR`, then `pg_config --bindir`, then the newest `/usr/lib/postgresql/*/bin`, then PATH.
    static func findBinDirectory(environment: [String], log: String) throws -> String {
        var candidates: [String] = []
        if let explicit = ProcessInfo.processInfo.environment["PG_BINDIR"] { candidates.append(explicit) }
        let pathDirs = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(
            String.init
        )
        if let pgConfig = pathDirs.map({ $0 + "/pg_config" }).first(where: {
            FileManager.default.isExecutableFile(atPath: $0)
        }) {
            let outFile = log + ".pg_config"
            let (status, output) = ChildProcess(
                executable: pgConfig,
                arguments: ["--bindir"],
                runAsUser: nil,
                environment: environment
            ).run(logFile: outFile)
            unlink(outFile)
            if status == 0 { candidates.append(output.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }
        candidates += versions.map { "/usr/lib/postgresql/\($0)/bin" }
        candidates += pathDirs
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }) {
            return found
        }
        throw PostgresError(
            code: .cluster,
            message:
                "initdb not found (looked in \(candidates.prefix(4).joined(separator: ", ")), ...): install the PostgreSQL server, e.g. `apt-get install postgresql`, or set PG_BINDIR"
        )
    }

    /// A free port on 127.0.0.1 below the kernel's ephemeral range (`ip_local_port_range`), so that a restart can
    /// bind it again: a port the kernel chose for a bind to 0 may be handed out, once freed, as a client
    /// connection's local port (another test's connection to its PostgreSQL), and the restart would fail with
    /// "address already in use". Falls back to the kernel's choice when no port below the range is free.
    static func freePort() throws -> Int {
        let rangeStart =
            (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
            .flatMap { $0.split(whereSeparator: \.isWhitespace).first }.flatMap { Int($0) } ?? 32_768
        if rangeStart > 10_001 {
            for _ in 0..<200 {
                let port = Int.random(in: 10_000..<rangeStart)
                if try bindLoopback(port: port) != nil { return port }
            }
        }
        guard let port = try bindLoopback(port: 0) else {
            throw PostgresError(code: .cluster, message: "could not bind 127.0.0.1:0 to pick a free port")
        }
        return port
    }

    /// Binds 127.0.0.1:`port` (0: the kernel chooses), closes the socket and returns the port bound, or nil when
    /// the bind failed.
    private static func bindLoopback(port: Int) throws -> Int? {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw PostgresError(code: .cluster, message: "socket() failed while picking a free port") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bind(fd, sa, length) == 0 && getsockname(fd, sa, &length) == 0
            }
        }
        return bound ? Int(UInt16(bigEndian: address.sin_port)) : nil
    }

    private static func writeSettings(dataDirectory: String, port: Int, socketDirectory: String) throws {
        let settings = """

            # throwaway cluster settings
            listen_addresses = '127.0.0.1'
            port = \(port)
            unix_socket_directories = '\(socketDirectory)'
            fsync = off
            synchronous_commit = off
            full_page_writes = off
            max_connections = 200
            shared_buffers = 32MB
            logging_collector = off

            """
        let auto = dataDirectory + "/postgresql.auto.conf"  // read last, so a retry's port wins
        guard let handle = FileHandle(forWritingAtPath: auto) else {
            throw PostgresError(code: .cluster, message: "could not open \(auto) to configure the cluster")
        }
        defer { try? handle.close() }
        handle.seekToEndOfFile()
        handle.write(Data(settings.utf8))
    }
}

/// How to stop one cluster; Sendable so atexit and signal handlers can use it.
struct ClusterControl: Sendable, Hashable {
    let pgCtl: String
    let dataDirectory: String
    let rootDirectory: String
    let runAsUser: String?
    let environment: [String]

    func pgCtl(_ arguments: [String]) -> (status: Int32, output: String) {
        ChildProcess(
            executable: pgCtl,
            arguments: ["-D", dataDirectory] + arguments,
            runAsUser: runAsUser,
            environment: environment
        )
        .run(logFile: rootDirectory + "/commands.log")
    }

    func stopAndRemove() {
        _ = pgCtl(["-m", "immediate", "-w", "-t", "30", "stop"])
        _ = ChildProcess(
            executable: "/bin/rm",
            arguments: ["-rf", rootDirectory],
            runAsUser: nil,
            environment: environment
        )
        .run(logFile: "/dev/null")
    }
}

/// Every running throwaway cluster of this process, stopped at exit or on SIGINT/SIGTERM.
enum ThrowawayRegistry {
    private static let clusters = Mutex<Set<ClusterControl>>([])
    private static let hooks = Mutex<(atexit: Bool, signals: [DispatchSource])>((false, []))

    static func register(_ control: ClusterControl, installSignalHandlers: Bool) {
        _ = clusters.withLock { $0.insert(control) }
        hooks.withLock { state in
            if !state.atexit {
                state.atexit = true
                atexit { ThrowawayRegistry.stopAll() }
            }
            guard installSignalHandlers, state.signals.isEmpty else { return }
            for signalNumber in [SIGINT, SIGTERM] {
                signal(signalNumber, SIG_IGN)  // let the Dispatch source see it instead of dying
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
                source.setEventHandler { @Sendable in
                    ThrowawayRegistry.stopAll()
                    // Die of the same signal. Dispatch threads block signals: unblock it on this
                    // thread before raising, and exit with the shell's code if that still fails.
                    signal(signalNumber, SIG_DFL)
                    var set = sigset_t()
                    sigemptyset(&set)
                    sigaddset(&set, signalNumber)
                    pthread_sigmask(SIG_UNBLOCK, &set, nil)
                    raise(signalNumber)
                    usleep(2_000_000)
                    _exit(128 + signalNumber)
                }
                source.resume()
                // `any DispatchSourceSignal` is not Sendable; the concrete class is.
                if let concrete = source as? DispatchSource { state.signals.append(concrete) }
            }
        }
    }

    static func unregister(_ control: ClusterControl) {
        _ = clusters.withLock { $0.remove(control) }
    }

    static func stopAll() {
        let all = clusters.withLock { set in
            defer { set.removeAll() }
            return set
        }
        for control in all { control.stopAndRemove() }
    }
}
