import Contracts
import Foundation
import Serializers

/// A contract's cost beside the transcoding it follows (DESIGN §10):
///   serializerd-bench --contract SCHEMA JSON [ROUNDS]          medians of both, and their ratio
///   serializerd-bench --contract-phase normalize|validate|checked SCHEMA JSON N   N runs of one, for callgrind
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

    /// What a JSON route does with a contract: the normalizer checks as it writes, and the
    /// contract reads again only what it left (here nothing, or the tree when it could not
    /// vouch). Returns the violations found.
    static func checked(_ schema: Schema, _ body: [UInt8], _ contract: OutputContract) -> Int {
        guard let made = try? JSONNormalizer.normalize(body, countingNumbers: true, checking: contract) else { return -1 }
        return schema.validate(json: made.bytes, vouch: made.vouch, maxDepth: 512).count
    }

    static func run(_ schemaPath: String, _ jsonPath: String, rounds: Int) throws {
        let (schema, body, normalized) = try load(schemaPath, jsonPath)
        let violations = validate(schema, normalized)
        guard violations == 0 else { print("the document breaks its schema (\(violations) violations)"); exit(1) }
        guard let contract = schema.outputContract,
              (try JSONNormalizer.normalize(body, countingNumbers: true, checking: contract)).vouch != nil else {
            print("the normalizer could not vouch for the document"); exit(1)
        }
        var ratios: [Double] = [], transcodes: [Double] = [], checks: [Double] = []
        var fusedRatios: [Double] = [], fused: [Double] = [], unfused: [Double] = []
        for _ in 0..<rounds {
            let transcode = measure(minSeconds: 0.5) { _ = try? JSONNormalizer.normalizeNotingNumbers(body) }
            let check = measure(minSeconds: 0.5) { _ = validate(schema, normalized) }
            transcodes.append(transcode * 1e3)
            checks.append(check * 1e3)
            ratios.append(check / transcode)
            // The added cost is a fraction of a small time: the two alternate run by run,
            // so that the machine's drift falls on both alike.
            var plain: [Double] = [], both: [Double] = []
            for _ in 0..<400 {
                var t0 = now()
                _ = try? JSONNormalizer.normalizeNotingNumbers(body)
                plain.append(now() - t0)
                t0 = now()
                _ = checked(schema, body, contract)
                both.append(now() - t0)
            }
            fused.append(median(both) * 1e3)
            unfused.append(median(plain) * 1e3)
            fusedRatios.append((median(both) - median(plain)) / median(plain))
        }
        print(String(format: "transcode %.3f ms, contract %.3f ms (medians of %d rounds); contract ÷ transcode %.2f (%.2f–%.2f)",
                     median(transcodes), median(checks), rounds, median(ratios), ratios.min()!, ratios.max()!))
        print(String(format: "checked in the normalizer: %.3f ms beside %.3f ms; added ÷ transcode %.3f (%.3f–%.3f)",
                     median(fused), median(unfused), median(fusedRatios), fusedRatios.min()!, fusedRatios.max()!))
    }

    static func phase(_ name: String, _ schemaPath: String, _ jsonPath: String, times: Int) throws {
        let (schema, body, normalized) = try load(schemaPath, jsonPath)
        let contract = schema.outputContract!
        var sink = 0
        for _ in 0..<times {
            switch name {
            case "normalize": sink &+= (try? JSONNormalizer.normalizeNotingNumbers(body))?.bytes.count ?? 0
            case "checked": sink &+= checked(schema, body, contract)
            default: sink &+= validate(schema, normalized)
            }
        }
        print(sink)
    }
}
