// libFuzzer target for form bodies (FormDecoder, Sources/Serializers), built by
// fuzz/run.sh: memory safety, and the bounded-work contract — output linear in the
// input and keys no deeper than the limit.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    do throws(TranscodeError) {
        let value = try FormDecoder.decode(input, charset: size % 2 == 0 ? nil : "iso-8859-1", maxDepth: 16)
        let budget = OutputBudget(input: size, cap: size % 3 == 0 ? 2 * size + 16 : OutputBudget.defaultCap)
        let json = try NormalizedJSON(value, budget: budget)
        precondition(json.bytes.count <= budget.limit, "\(size) bytes became \(json.bytes.count) bytes of JSON")
        var depth = 0
        var current = value
        while case .object(let members) = current, let first = members.first { depth += 1; current = first.1 }
        precondition(depth <= 17, "nested \(depth) deep past the limit of 16")
    } catch {
        precondition(!error.description.isEmpty, "a failure without a detail")
    }
    return 0
}
