// libFuzzer target for XML → JSON (XMLTranscoder: its fast path, XMLFastScanner, and
// libxml2 with the attribute pre-scan), built by fuzz/run.sh: memory safety, and the
// bounded-work contract — output linear in the input, every failure a detail rather than a
// trap. Differential twice over: the fast path gives what libxml2 gives through the same
// builder (the same JSON, or both fail), and the transcoder gives what it gave before its
// regrouping changed (Reference.swift) whenever it succeeds.
@testable import Serializers

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    var options = XMLOptions()
    if size % 3 == 0 { options.namespaces = .strip }
    let budget = OutputBudget(input: size, cap: size % 2 == 0 ? OutputBudget.defaultCap : 2 * size + 16)
    let libxml2: Result<NormalizedJSON, TranscodeError> = Result { () throws(TranscodeError) in
        try XMLTranscoder.transcode(input, options: options, maxDepth: 64, budget: budget, fastPath: false)
    }
    do throws(TranscodeError) {
        let json = try XMLTranscoder.transcode(input, options: options, maxDepth: 64, budget: budget)
        if case .success(let expected) = libxml2 {
            precondition(expected == json, "libxml2 alone writes \(expected.text), the fast path \(json.text)")
        } else {
            preconditionFailure("the fast path accepted what libxml2 refuses: \(json.text)")
        }
        precondition(json.bytes.count <= budget.limit, "\(size) bytes became \(json.bytes.count) bytes of JSON")
        // Differential: the transcoder before runs and counting-sort regrouping agrees.
        let reference = try? ReferenceXMLTranscoder.transcode(input, options: options, maxDepth: 64)
        precondition(reference == json, "the reference writes \(reference?.text ?? "nothing"), now \(json.text)")
    } catch {
        precondition(!error.description.isEmpty, "a failure without a detail")
        if case .success(let expected) = libxml2 { preconditionFailure("libxml2 alone writes \(expected.text), the fast path fails: \(error)") }
    }
    return 0
}
