import Contracts
import Foundation
import Serializers

/// A contract's cost beside the transcoding it follows (DESIGN §10):
///   serializerd-bench --contract SCHEMA JSON [ROUNDS]          medians of both, and their ratio
///   serializerd-bench --contract-phase normalize|validate SCHEMA JSON N   N runs of one, for callgrind
enum ContractBench {
    static func load(_ schemaPath: String, _ jsonPath: String) throws -> (Schema, [UInt8], [UInt8]) {
        guard let schemaData = FileManager.default.contents(atPath: schemaPath),
              let body = FileManager.default.contents(atPath: jsonPath) else { throw CocoaError(.fileReadNoSuchFile) }
        let schema = try SchemaCompiler.compile(try JSONValue.parse([UInt8](schemaData)))
        let normalized = try JSONNormalizer.normalize([UInt8](body))
        return (schema, [UInt8](body), normalized)
    }

    /// What a route does after its serializer: the output checked, as RouteContract does.
    static func validate(_ schema: Schema, _ normalized: [UInt8]) -> Int {
        schema.validate(json: normalized, maxDepth: 512).count
    }

    static func run(_ schemaPath: String, _ jsonPath: String, rounds: Int) throws {
        let (schema, body, normalized) = try load(schemaPath, jsonPath)
        let violations = validate(schema, normalized)
        guard violations == 0 else { print("the document breaks its schema (\(violations) violations)"); exit(1) }
        var ratios: [Double] = [], transcodes: [Double] = [], checks: [Double] = []
        for _ in 0..<rounds {
            let transcode = measure(minSeconds: 0.5) { _ = try? JSONNormalizer.normalize(body) }
            let check = measure(minSeconds: 0.5) { _ = validate(schema, normalized) }
            transcodes.append(transcode * 1e3)
            checks.append(check * 1e3)
            ratios.append(check / transcode)
        }
        print(String(format: "transcode %.3f ms, contract %.3f ms (medians of %d rounds); contract ÷ transcode %.2f (%.2f–%.2f)",
                     median(transcodes), median(checks), rounds, median(ratios), ratios.min()!, ratios.max()!))
    }

    static func phase(_ name: String, _ schemaPath: String, _ jsonPath: String, times: Int) throws {
        let (schema, body, normalized) = try load(schemaPath, jsonPath)
        var sink = 0
        for _ in 0..<times {
            sink &+= name == "normalize" ? ((try? JSONNormalizer.normalize(body))?.count ?? 0) : validate(schema, normalized)
        }
        print(sink)
    }
}
