import Foundation

/// Writes a report folder atomically: every file goes into `<report-dir>/.tmp-<name>-<pid>-<random>/`,
/// which is then renamed to `<report-dir>/<name>`. An existing folder of the same name (a regeneration)
/// is first renamed aside and removed only after the new one is in place, so readers see the old
/// complete folder or the new complete folder, never a half-written one.
public struct ReportFolderWriter: Sendable {
    /// The report directory (`--report-dir`), created when missing.
    public let reportDirectory: String

    public init(reportDirectory: String) {
        self.reportDirectory = reportDirectory
    }

    /// Writes `files` (name -> bytes) as the folder `name` and returns the folder's path.
    /// - Throws: `ReportError` naming the path (not writable, disk full); nothing half-written stays behind.
    public func write(folderName name: String, files: [(name: String, data: Data)]) throws(ReportError) -> String {
        do {
            return try write(folderName: name) { temporary in
                for file in files { try AtomicFiles.writeNewFile("\(temporary)/\(file.name)", file.data) }
            }
        } catch let error as ReportError {
            throw error
        } catch {
            throw ReportError(.encoding, path: name, "cannot write the report folder \(name): \(error)")
        }
    }

    /// Builds the folder `name` by calling `body` with the temporary folder's path (`body` creates the
    /// files in it), then publishes it atomically and returns the folder's path. If `body` throws, the
    /// temporary folder is removed, any existing folder stays, and the error is rethrown as is.
    /// - Throws: `ReportError` naming the path for file-system failures, or whatever `body` throws.
    public func write(folderName name: String, _ body: (String) throws -> Void) throws -> String {
        let directory = reportDirectory.isEmpty ? "." : reportDirectory
        try AtomicFiles.makeDirectories(directory)
        Self.removeLeftovers(of: name, in: directory)
        let suffix = AtomicFiles.uniqueSuffix()
        let temporary = "\(directory)/.tmp-\(name)-\(suffix)"
        let destination = "\(directory)/\(name)"
        try AtomicFiles.makeDirectory(temporary)
        do {
            try body(temporary)
            AtomicFiles.syncDirectory(temporary)
            CrashPoints.reach("report-folder")
            if FileManager.default.fileExists(atPath: destination) {
                let old = "\(directory)/.old-\(name)-\(suffix)"
                try AtomicFiles.rename(destination, old)
                do throws(ReportError) {
                    try AtomicFiles.rename(temporary, destination)
                } catch {
                    // Put the previous complete folder back.
                    try? AtomicFiles.rename(old, destination)
                    throw error
                }
                AtomicFiles.removeTree(old)
            } else {
                try AtomicFiles.rename(temporary, destination)
            }
            AtomicFiles.syncDirectory(directory)
        } catch {
            AtomicFiles.removeTree(temporary)
            throw error
        }
        return destination
    }

    /// Removes `.tmp-<name>-<pid>-*` and `.old-<name>-<pid>-*` folders that a writer killed mid-way left
    /// (its process no longer exists); a live writer's folders stay.
    static func removeLeftovers(of name: String, in directory: String) {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for entry in entries {
            for prefix in [".tmp-\(name)-", ".old-\(name)-"] where entry.hasPrefix(prefix) {
                let rest = entry.dropFirst(prefix.count)
                guard let pid = rest.split(separator: "-").first.flatMap({ Int32($0) }), pid > 0 else { continue }
                if kill(pid, 0) != 0 && errno == ESRCH { AtomicFiles.removeTree("\(directory)/\(entry)") }
            }
        }
    }
}
