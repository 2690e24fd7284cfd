@testable import Contracts
import Foundation
import Serializers
import TestSupport

/// The official JSON Schema Test Suite (draft 2020-12, Tests/Fixtures/json-schema-test-suite),
/// run through the compiler and validator.
struct SchemaSuiteRunner {
    struct Outcome {
        var passed = 0
        /// Tests the one-pass walk decided itself (the rest it left to the tree).
        var walked = 0
        /// Tests the normalizer's check vouched for as it wrote the instance.
        var vouched = 0
        /// "file: case: test" of each test whose verdict differed, or whose schema did not compile.
        var failed: [String] = []
    }

    static let root = Fixture.directory.appendingPathComponent("json-schema-test-suite")

    /// `http://localhost:1234/…` read from the suite's remotes; nothing is fetched.
    static func remote(_ uri: String) -> JSONValue? {
        let prefix = "http://localhost:1234/"
        guard uri.hasPrefix(prefix), let data = try? Data(contentsOf: root.appendingPathComponent("remotes/" + uri.dropFirst(prefix.count))) else { return nil }
        return try? JSONValue.parse([UInt8](data))
    }

    static func run(file: String) throws -> Outcome {
        let data = try Data(contentsOf: root.appendingPathComponent("tests/draft2020-12/" + file))
        guard case .array(let groups) = try JSONValue.parse([UInt8](data)) else { return Outcome() }
        var outcome = Outcome()
        for group in groups {
            guard case .string(let description)? = group["description"], let schemaJSON = group["schema"],
                  case .array(let tests)? = group["tests"] else { continue }
            let schema: Schema
            do {
                schema = try SchemaCompiler.compile(schemaJSON, uri: "http://localhost:1234/draft2020-12/suite.json", load: remote)
            } catch {
                outcome.failed += tests.map { "\(file): \(description): \(text($0["description"])) (compile: \(error))" }
                continue
            }
            for test in tests {
                guard let instance = test["data"], case .bool(let valid)? = test["valid"] else { continue }
                let bytes = try instance.encoded()
                let walk = schema.walk(json: bytes)
                if walk != nil { outcome.walked += 1 }
                let checked = schema.checkedWhileNormalizing(bytes, maxDepth: 512)
                if checked?.vouched == true { outcome.vouched += 1 }
                if schema.accepts(instance) == valid && schema.validate(instance).isEmpty == valid && (walk ?? valid) == valid
                    && schema.validate(json: bytes, maxDepth: 512).isEmpty == valid
                    && (checked.map { $0.valid == valid && $0.sameOutput } ?? true) {
                    outcome.passed += 1
                } else {
                    outcome.failed.append("\(file): \(description): \(text(test["description"]))")
                }
            }
        }
        return outcome
    }

    static func text(_ value: JSONValue?) -> String {
        if case .string(let s)? = value { return s }
        return "?"
    }

    static func files(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("tests/draft2020-12/" + directory).path)
            .filter { $0.hasSuffix(".json") }.sorted().map { directory.isEmpty ? $0 : directory + "/" + $0 }
    }
}
