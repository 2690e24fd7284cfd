// libFuzzer target for the contract's JSON Schema compiler and validator, and its OpenAPI
// reader (Sources/Contracts), built by fuzz/run.sh. The input is a schema and an instance, split
// at the first NUL byte (none: the input is both). Oracles: compiling either succeeds or
// names a location; validating never traps; `accepts` and an empty `validate` agree; at
// most `limit` violations come back, each with a pointer the instance has; the one-pass
// walk over the instance's bytes (as given, and normalized) and the normalizer's check as
// it writes them agree with the tree.
import Glibc
import Serializers

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let split = input.firstIndex(of: 0) ?? input.count
    let schemaBytes = Array(input[..<split])
    let instanceBytes = split < input.count ? Array(input[(split + 1)...]) : schemaBytes
    let options = JSONReadOptions(allowFragments: true, maxDepth: 64)
    guard let schemaJSON = try? JSONValue.parse(schemaBytes, options: options),
          let instance = try? JSONValue.parse(instanceBytes, options: options) else { return 0 }
    // An OpenAPI document too: compiled, then asked for a path taken from the instance.
    if schemaJSON["openapi"] != nil {
        do throws(SchemaError) {
            let document = try OpenAPIContract.compile(schemaJSON, uri: "file:///fuzz/openapi.json")
            let path: String = if case .string(let s) = instance { s } else { "/" }
            for status in [200, 404, 500] {
                if let schema = document.schema(path: path, method: "GET", status: status) {
                    precondition(schema.accepts(instance) == schema.validate(instance).isEmpty, "accepts and validate disagree")
                    walkAgrees(schema, instance, instanceBytes)
                }
            }
        } catch {
            precondition(!error.location.isEmpty, "an OpenAPI error without a location")
        }
    }
    let schema: Schema
    do throws(SchemaError) {
        schema = try SchemaCompiler.compile(schemaJSON) { _ in nil }
    } catch {
        precondition(!error.location.isEmpty && !error.message.isEmpty, "a schema error without a location")
        return 0
    }
    let violations = schema.validate(instance, limit: 5)
    precondition(violations.count <= 5, "more violations than the limit")
    precondition(schema.accepts(instance) == violations.isEmpty, "accepts and validate disagree")
    walkAgrees(schema, instance, instanceBytes)
    // A member name the instance repeats makes a pointer name either of them (RFC 6901
    // does not say which): only unambiguous instances are held to resolving.
    if !repeatsAMember(instance) {
        for violation in violations {
            precondition(instance.at(pointer: violation.pointer) != nil, "a violation at \(violation.pointer), which the instance lacks")
        }
    }
    return 0
}

/// The bytes checked as a route checks them say what the tree says: the walk over them, and
/// the normalizer's check as it writes them (which leaves the output as it was).
func walkAgrees(_ schema: Schema, _ instance: JSONValue, _ bytes: [UInt8]) {
    let valid = schema.accepts(instance)
    let options = JSONReadOptions(allowFragments: true, maxDepth: 64)
    for form in [bytes, (try? JSONNormalizer.normalize(bytes, options: options)) ?? bytes] {
        if schema.validate(json: form, maxDepth: 64).isEmpty != valid {
            fputs("the walk over \(String(decoding: form, as: UTF8.self)) says \(!valid), the tree \(valid)\n", stderr)
            abort()
        }
    }
    guard let contract = schema.outputContract,
          let made = try? JSONNormalizer.normalize(bytes, options: options, countingNumbers: true, checking: contract) else { return }
    precondition(made.bytes == (try? JSONNormalizer.normalize(bytes, options: options)), "checking changed the output")
    if schema.validate(json: made.bytes, vouch: made.vouch, maxDepth: 64).isEmpty != valid {
        fputs("the normalizer's check of \(String(decoding: bytes, as: UTF8.self)) says \(!valid), the tree \(valid)\n", stderr)
        abort()
    }
}

func repeatsAMember(_ value: JSONValue) -> Bool {
    switch value {
    case .object(let members):
        return Set(members.map(\.0)).count != members.count || members.contains { repeatsAMember($0.1) }
    case .array(let items):
        return items.contains(where: repeatsAMember)
    default:
        return false
    }
}
