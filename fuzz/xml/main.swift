// libFuzzer target for XML → JSON (XMLTranscoder and the attribute pre-scan, on libxml2),
// built by fuzz/run.sh: memory safety, and the bounded-work contract — output linear in
// the input, and every failure a detail rather than a trap.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    var options = XMLOptions()
    if size % 3 == 0 { options.namespaces = .strip }
    do throws(TranscodeError) {
        let budget = OutputBudget(input: size, cap: size % 2 == 0 ? OutputBudget.defaultCap : 2 * size + 16)
        let json = try XMLTranscoder.transcode(input, options: options, maxDepth: 64, budget: budget)
        precondition(json.bytes.count <= budget.limit, "\(size) bytes became \(json.bytes.count) bytes of JSON")
    } catch {
        precondition(!error.description.isEmpty, "a failure without a detail")
    }
    return 0
}
