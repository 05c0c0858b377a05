import Foundation
import PackagePlugin

/// Generates `BuildInfo.swift` for the target it is applied to, before every build: the commit the binary is built
/// from and every migration in `sql/`, so the binary carries its schema and needs no `sql/` folder on the host
/// (docs/packaging.md, "What the binary carries"). The work is `scripts/lib/generate-build-info.sh`, run as a
/// prebuild command; it rewrites the file only when its content changes, so an unchanged tree rebuilds nothing.
@main
struct BuildInfoPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let package = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appending(path: "generated")
        return [
            .prebuildCommand(
                displayName: "Build info and migrations for \(target.name)",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [
                    package.appending(path: "scripts/lib/generate-build-info.sh").path,
                    package.path,
                    output.appending(path: "BuildInfo.swift").path,
                ],
                outputFilesDirectory: output
            )
        ]
    }
}
