import Foundation

/// Checks, before a run creates its row or asks Apple anything, that its report folder and its metrics file can be
/// written (docs/operations.md, "Reports that cannot be written"): each folder is created when missing and a probe
/// file of 64 KiB is written into it and removed, so a read-only folder, a path through a regular file or a full
/// disk stops the run at once (exit 78) instead of after the night's work.
public enum ReportDestinationCheck {
    static let probeBytes = 64 * 1024

    /// - Throws: `ConfigurationError` naming the flag and the path.
    public static func check(reportDirectory: String?, metricsFile: String?) throws {
        if let reportDirectory {
            try probe(
                directory: reportDirectory.isEmpty ? "." : reportDirectory,
                setting: "--report-dir \(reportDirectory)"
            )
        }
        guard let metricsFile else { return }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: metricsFile, isDirectory: &isDirectory), isDirectory.boolValue {
            throw ConfigurationError("--metrics-file \(metricsFile): is a directory; name a file")
        }
        let parent = (metricsFile as NSString).deletingLastPathComponent
        try probe(directory: parent.isEmpty ? "." : parent, setting: "--metrics-file \(metricsFile)")
    }

    private static func probe(directory: String, setting: String) throws {
        do throws(ReportError) {
            try AtomicFiles.makeDirectories(directory)
            let path = "\(directory)/.write-check-\(AtomicFiles.uniqueSuffix())"
            defer { unlink(path) }
            try AtomicFiles.writeNewFile(path, Data(count: probeBytes))
        } catch {
            throw ConfigurationError(
                "\(setting) cannot be written: \(error.path ?? directory): \(error.message) (checked before the run: "
                    + "nothing was asked of Apple)"
            )
        }
    }
}
