// swift-tools-version:6.0
import PackageDescription

// One target per concern. C is kept thin and at the edge (CLibpq, CCurl); the
// domain logic (ReceiptDomain) has no I/O and no dependencies so it can be tested alone.
// The simulator (AppStoreSimulator) is an independent witness: it must never import
// ReceiptDomain or anything that depends on it.
let package = Package(
    name: "renewal-reconciler",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "renewal-reconciler", targets: ["renewal-reconciler"]),
        .executable(name: "appstore-simulator", targets: ["appstore-simulator"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    ],
    targets: [
        // MARK: C system libraries
        .systemLibrary(
            name: "CLibpq",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),

        // MARK: Calendar arithmetic and RFC 3339 (pure, shared; the simulator keeps its own)
        .target(name: "CivilTime"),

        // MARK: Thin Swift wrappers
        .target(name: "Postgres", dependencies: ["CLibpq", "CivilTime"]),
        .target(name: "CurlHTTP", dependencies: ["CCurl"]),

        // MARK: Domain (pure, no I/O)
        .target(name: "ReceiptDomain", dependencies: ["CivilTime"]),

        // MARK: verifyReceipt client (HTTP + classification)
        .target(name: "AppStoreClient", dependencies: ["CurlHTTP", "ReceiptDomain"]),

        // MARK: The reconciler: schema, pipeline, persistence, import, reports
        .target(
            name: "Reconciler",
            dependencies: [
                "Postgres", "AppStoreClient", "ReceiptDomain", "CivilTime",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "renewal-reconciler",
            dependencies: [
                "Reconciler", "CivilTime",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: App Store simulator (independent witness: no ReceiptDomain here)
        .target(
            name: "AppStoreSimulator",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "appstore-simulator",
            dependencies: [
                "AppStoreSimulator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),

        // MARK: Tests
        .testTarget(name: "CivilTimeTests", dependencies: ["CivilTime"]),
        .testTarget(name: "ReceiptDomainTests", dependencies: ["ReceiptDomain", "CivilTime"], resources: [.copy("Fixtures")]),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "TestSupport"]),
        .testTarget(
            name: "CurlHTTPTests",
            dependencies: [
                "CurlHTTP",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "AppStoreSimulatorTests",
            dependencies: [
                "AppStoreSimulator",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "AppStoreClientTests", dependencies: ["AppStoreClient", "AppStoreSimulator"]),
        .testTarget(
            name: "ReconcilerTests",
            dependencies: ["Reconciler", "AppStoreSimulator", "TestSupport", "CivilTime"]
        ),
        // Shared test helpers: a throwaway PostgreSQL per test process, temp dirs, binary paths.
        .target(name: "TestSupport", dependencies: ["Postgres"], path: "Tests/TestSupport"),
    ],
    swiftLanguageModes: [.v6]
)
