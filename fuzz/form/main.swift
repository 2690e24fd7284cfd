@testable import Serializers
import HTTPCore

// libFuzzer target for form bodies (FormDecoder, Sources/Serializers), built by
// fuzz/run.sh: memory safety, the bounded-work contract — output linear in the input
// and keys no deeper than the limit — and a differential check against the decoder it
// replaced (Reference.swift): the same value or the same failure for every ASCII body.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let charset = size % 2 == 0 ? nil : "iso-8859-1"
    let reference: Result<JSONValue, TranscodeError>
    do throws(TranscodeError) { reference = .success(try ReferenceFormDecoder.decode(input, charset: charset, maxDepth: 16)) } catch { reference = .failure(error) }
    do throws(TranscodeError) {
        let value = try FormDecoder.decode(input, charset: charset, maxDepth: 16)
        if comparable(input) {
            precondition(reference == .success(value), "the flat decoder reads \(value), the reference \(reference)")
        }
        let budget = OutputBudget(input: size, cap: size % 3 == 0 ? 2 * size + 16 : OutputBudget.defaultCap)
        let json = try NormalizedJSON(value, budget: budget)
        precondition(json.bytes.count <= budget.limit, "\(size) bytes became \(json.bytes.count) bytes of JSON")
        var depth = 0
        var current = value
        while case .object(let members) = current, let first = members.first { depth += 1; current = first.1 }
        precondition(depth <= 17, "nested \(depth) deep past the limit of 16")
    } catch {
        precondition(!error.description.isEmpty, "a failure without a detail")
        if error.description.contains("would exceed") { return 0 }
        if comparable(input) {
            precondition(reference == .failure(error), "the flat decoder fails with '\(error)', the reference \(reference)")
        }
    }
    return 0
}

/// The reference split keys by Character, so a combining mark after `[` or `]` hid the
/// bracket from it (`a[\u{0617}]` was one key); the flat decoder splits by bytes, as Rack
/// does. Compared only where no non-ASCII byte can appear: none raw, none escaped.
func comparable(_ input: [UInt8]) -> Bool {
    for (k, c) in input.enumerated() {
        if c >= 0x80 { return false }
        if c == UInt8(ascii: "%"), k + 1 < input.count, let hi = Hex.value(input[k + 1]), hi >= 8 { return false }
    }
    return true
}
