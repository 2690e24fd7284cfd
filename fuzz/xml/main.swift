// libFuzzer target for XML → JSON (XMLTranscoder and the attribute pre-scan, on libxml2),
// built by fuzz/run.sh: memory safety, and the bounded-work contract — output linear in
// the input, every failure a detail rather than a trap, and the same JSON as the
// transcoder before its regrouping changed (Reference.swift) whenever this one succeeds.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    var options = XMLOptions()
    if size % 3 == 0 { options.namespaces = .strip }
    do throws(TranscodeError) {
        let budget = OutputBudget(input: size, cap: size % 2 == 0 ? OutputBudget.defaultCap : 2 * size + 16)
        let json = try XMLTranscoder.transcode(input, options: options, maxDepth: 64, budget: budget)
        precondition(json.bytes.count <= budget.limit, "\(size) bytes became \(json.bytes.count) bytes of JSON")
        // Differential: the transcoder before runs and counting-sort regrouping agrees.
        let reference = try? ReferenceXMLTranscoder.transcode(input, options: options, maxDepth: 64)
        precondition(reference == json, "the reference writes \(reference?.text ?? "nothing"), now \(json.text)")
    } catch {
        precondition(!error.description.isEmpty, "a failure without a detail")
    }
    return 0
}
