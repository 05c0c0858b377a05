import Foundation
import Reconciler
import Testing

@Suite struct ReportFolderWriterTests {
    @Test func writesThenReplacesAFolderWithoutLeftovers() throws {
        let directory = try ReportTempDirectory()
        let reports = directory.path + "/reports/nested"
        let writer = ReportFolderWriter(reportDirectory: reports)
        let first = try writer.write(
            folderName: "2024-05-01_run-1",
            files: [("a.txt", Data("one".utf8)), ("b.txt", Data("two".utf8))]
        )
        #expect(first == reports + "/2024-05-01_run-1")
        #expect(try String(contentsOfFile: first + "/a.txt", encoding: .utf8) == "one")

        _ = try writer.write(folderName: "2024-05-01_run-1", files: [("a.txt", Data("three".utf8))])
        #expect(try String(contentsOfFile: first + "/a.txt", encoding: .utf8) == "three")
        #expect(!FileManager.default.fileExists(atPath: first + "/b.txt"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: reports) == ["2024-05-01_run-1"])
    }

    @Test func unwritableDirectoryGivesAClearErrorAndKeepsTheOldFolder() throws {
        let directory = try ReportTempDirectory()
        let writer = ReportFolderWriter(reportDirectory: directory.path)
        let folder = try writer.write(folderName: "r", files: [("a.txt", Data("old".utf8))])
        // A file name that cannot be created makes the second write fail half-way.
        let error = #expect(throws: ReportError.self) {
            try writer.write(folderName: "r", files: [("a.txt", Data("new".utf8)), ("no/such/dir.txt", Data())])
        }
        #expect(error?.code == .notWritable)
        #expect(error?.description.contains(directory.path) == true)
        #expect(try String(contentsOfFile: folder + "/a.txt", encoding: .utf8) == "old")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["r"])
    }

    @Test func reportDirectoryThatIsAFileIsReported() throws {
        let directory = try ReportTempDirectory()
        let file = directory.path + "/plain-file"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let error = #expect(throws: ReportError.self) {
            try ReportFolderWriter(reportDirectory: file).write(folderName: "r", files: [])
        }
        #expect(error?.description.contains(file) == true)
    }
}
