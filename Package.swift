// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "serializerd",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "serializerd", targets: ["serializerd"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // System libraries (Debian -dev packages, found through pkg-config).
        .systemLibrary(name: "CLibevent", pkgConfig: "libevent", providers: [.apt(["libevent-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CLibxml2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        // Typed wrappers for C variadics and macros; no logic.
        .target(name: "CShims", dependencies: ["CCurl"]),
        .target(name: "Upstream", dependencies: ["CCurl", "CShims", "CTLS", "EventLoop", "HTTPCore", "Tracing"]),

        .target(name: "HTTPCore"),
        .target(name: "EventLoop", dependencies: ["CLibevent", "HTTPCore"]),
        // mmap/mremap wrappers for large growing buffers (mremap is variadic in C).
        .target(name: "CPages"),
        // 16-byte vector compares and masks that Swift's SIMD types do not lower well.
        .target(name: "CVector", dependencies: ["CSchema"]),
        // A route's TLS files checked with OpenSSL (libcurl's TLS library) at load.
        .target(name: "CTLS", linkerSettings: [.linkedLibrary("crypto")]),
        .target(name: "Serializers", dependencies: ["HTTPCore", "CLibxml2", "CPages", "CVector", "CSchema"]),
        .target(name: "Telemetry", dependencies: ["HTTPCore", "Serializers", "Tracing", .product(name: "Logging", package: "swift-log")]),
        // The response cache's RFC 9111 rules: Cache-Control, freshness, what may be stored.
        .target(name: "Cache", dependencies: ["HTTPCore"]),
        // Tapes and mocks: recorded upstream exchanges (HAR files), matched and replayed.
        .target(name: "Tapes", dependencies: ["HTTPCore", "Serializers", "Telemetry", "CPages", .product(name: "Logging", package: "swift-log")]),
        // Network conditions: latency, bandwidth, faults and payload chaos, per route and request.
        .target(name: "Network", dependencies: ["HTTPCore", "Serializers"]),
        // JSON Schema 2020-12 contracts on the normalized output (DESIGN §10).
        .target(name: "CRE2", linkerSettings: [.linkedLibrary("re2")]),
        // The contract's one-pass walk over normalized bytes.
        .target(name: "CSchema"),
        .target(name: "Contracts", dependencies: ["Serializers", "CRE2", "CSchema"]),
        // Resilience toward the upstream (DESIGN §11): the rate bucket, pauses, breaker, retry budget.
        .target(name: "Resilience", dependencies: ["HTTPCore"]),
        // Traces (DESIGN §12): Trace Context, spans, OTLP/HTTP JSON, the exporter's thread.
        .target(name: "Tracing", dependencies: ["HTTPCore"]),
        .target(name: "Proxy", dependencies: ["Serializers", "HTTPCore", "EventLoop", "Upstream", "Telemetry", "Tapes", "Cache", "Network", "Contracts", "Resilience", "Tracing",
                                              .product(name: "Yams", package: "Yams"), .product(name: "Logging", package: "swift-log")]),
        .executableTarget(
            name: "serializerd",
            dependencies: [
                "Proxy", "Serializers", "HTTPCore", "Upstream", "Telemetry", "Tapes",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "serializerd-bench",
            dependencies: ["Serializers", "HTTPCore", "CLibxml2", "Tapes", "Cache", "Contracts"],
            path: "bench/TranscodeBench"
        ),

        .target(name: "TestSupport", dependencies: ["Network"], path: "Tests/TestSupport"),
        .testTarget(name: "HTTPCoreTests", dependencies: ["HTTPCore"]),
        .testTarget(name: "EventLoopTests", dependencies: ["EventLoop", "HTTPCore"]),
        .testTarget(name: "UpstreamTests", dependencies: ["Upstream", "CCurl", "CShims", "HTTPCore"]),
        .testTarget(name: "SerializersTests", dependencies: ["Serializers", "HTTPCore", "TestSupport"]),
        .testTarget(name: "ProxyTests", dependencies: ["Proxy", "Serializers", "HTTPCore", "Cache", "TestSupport"]),
        .testTarget(name: "TapesTests", dependencies: ["Tapes", "Serializers", "Telemetry", "TestSupport"]),
        .testTarget(name: "CacheTests", dependencies: ["Cache", "HTTPCore"]),
        .testTarget(name: "ContractsTests", dependencies: ["Contracts", "Serializers", "TestSupport"]),
        .testTarget(name: "NetworkTests", dependencies: ["Network", "Serializers", "HTTPCore"]),
        .testTarget(name: "TelemetryTests", dependencies: ["Telemetry", "HTTPCore", "TestSupport", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "ResilienceTests", dependencies: ["Resilience", "HTTPCore"]),
        .testTarget(name: "TracingTests", dependencies: ["Tracing"]),
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport"]),
    ]
)
