// swift-tools-version:6.1
import PackageDescription

// One target per concern. C is kept thin and at the edge (CLibpq, CCurl, CZlib); the
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
        // Apple's signed data (AppStoreSignedData): P-256, X.509 chains, DER/BER. The range admits
        // swift-crypto 3.12.3 (the lowest swift-certificates accepts) and 4.x.
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        // Child processes (the demo's simulator, the tests' children): spawned without the parent's descriptors and
        // their exit seen through a pidfd (docs/testing.md, "One command"). Its Foundation trait is not needed.
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2", traits: []),
        .package(url: "https://github.com/apple/swift-system", from: "1.5.0"),
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
        // gunzip for Apple's report files, gzip for the simulator's (Foundation on Linux has no gzip).
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),

        // MARK: Calendar arithmetic and RFC 3339 (pure, shared; the simulator keeps its own)
        .target(name: "CivilTime"),

        // MARK: Thin Swift wrappers
        .target(name: "Postgres", dependencies: ["CLibpq", "CivilTime"]),
        .target(name: "CurlHTTP", dependencies: ["CCurl", "CivilTime"]),

        // MARK: Domain (pure, no I/O)
        .target(name: "ReceiptDomain", dependencies: ["CivilTime"]),

        // MARK: Apple's signed data: JWS to Apple's root, API tokens, receipt ids (pure: no network, no database;
        // the simulator must never import it)
        .target(
            name: "AppStoreSignedData",
            dependencies: [
                "CivilTime",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),

        // MARK: verifyReceipt client (HTTP + classification)
        .target(
            name: "AppStoreClient",
            dependencies: ["CivilTime", "CurlHTTP", "ReceiptDomain", "AppStoreSignedData"]
        ),

        // MARK: App Store Connect's report files (Sales and Trends, Financial): parsed into typed rows, stored once
        // (docs/apple-reports.md); the nightly run never reads them, the tie-out does
        .target(
            name: "AppleReports",
            dependencies: [
                "Postgres", "CivilTime", "CZlib", "ReceiptDomain", "AppStoreClient",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),

        // MARK: The reconciler: schema, pipeline, persistence, import, reports; the tie-out reads Apple's reports
        // (AppleReports: Pacific days, the fiscal calendar, the stored rows; docs/tie-out.md)
        .target(
            name: "Reconciler",
            dependencies: [
                "Postgres", "AppStoreClient", "ReceiptDomain", "AppStoreSignedData", "CivilTime", "AppleReports",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // MARK: The demo and the truth comparisons (drills, staging, tests): outside the library production links
        .target(
            name: "ReconcilerDemo",
            dependencies: [
                "Reconciler", "AppleReports", "AppStoreClient", "CurlHTTP", "Postgres", "ReceiptDomain", "CivilTime",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system", condition: .when(platforms: [.linux])),
            ]
        ),
        .executableTarget(
            name: "renewal-reconciler",
            dependencies: [
                "Reconciler", "ReconcilerDemo", "AppleReports", "CivilTime",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // BuildInfo: the commit and every sql/ migration, generated before each build (docs/packaging.md).
            plugins: ["BuildInfoPlugin"]
        ),
        .plugin(name: "BuildInfoPlugin", capability: .buildTool(), path: "Sources/BuildInfoPlugin"),

        // MARK: App Store simulator (independent witness: no ReceiptDomain here)
        .target(
            name: "AppStoreSimulator",
            dependencies: [
                // gzip for the App Store Connect report downloads (the C library only, no reconciler code).
                "CZlib",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // Its own Apple-shaped PKI and JWS signing (docs/simulator.md): never the reconciler's verifier.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
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
        .testTarget(
            name: "ReceiptDomainTests",
            dependencies: ["ReceiptDomain", "CivilTime"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "TestSupport"]),
        .testTarget(name: "CurlHTTPTests", dependencies: ["CurlHTTP", "TestSupport", "SignedDataTestSupport"]),
        .testTarget(
            name: "AppStoreSimulatorTests",
            dependencies: [
                "AppStoreSimulator", "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        .testTarget(name: "AppStoreClientTests", dependencies: ["AppStoreClient", "AppStoreSimulator", "TestSupport"]),
        .testTarget(
            name: "ReconcilerTests",
            dependencies: [
                "Reconciler", "ReconcilerDemo", "AppStoreSimulator", "TestSupport", "SignedDataTestSupport",
                "CivilTime",
                "AppleReports", "AppStoreClient",
                .product(name: "SystemPackage", package: "swift-system", condition: .when(platforms: [.linux])),
            ]
        ),
        .testTarget(
            name: "AppleReportsTests",
            dependencies: ["AppleReports", "AppStoreClient", "TestSupport", "CivilTime"]
        ),
        .testTarget(
            name: "AppStoreSignedDataTests",
            dependencies: [
                "AppStoreSignedData", "SignedDataTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            resources: [.copy("Fixtures")]
        ),
        // Test-time PKI (root, intermediate and leaf with Apple's OIDs), JWS signing, receipts in DER and BER.
        .target(
            name: "SignedDataTestSupport",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Tests/SignedDataTestSupport"
        ),
        // MARK: Benchmarks (harnesses, not tests)
        .executableTarget(
            name: "signed-data-benchmark",
            dependencies: ["AppStoreSignedData", "SignedDataTestSupport"],
            path: "Benchmarks/SignedData"
        ),
        // Shared test helpers: a throwaway PostgreSQL per test process, temp dirs, binary paths, child processes.
        .target(
            name: "TestSupport",
            dependencies: [
                "Postgres",
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system", condition: .when(platforms: [.linux])),
            ],
            path: "Tests/TestSupport"
        ),
        .testTarget(name: "TestSupportTests", dependencies: ["TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
