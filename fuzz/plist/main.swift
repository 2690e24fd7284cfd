// libFuzzer target for property lists (binary and XML, Sources/Serializers), built by
// fuzz/run.sh. Besides memory safety it checks the bounded-work contract: whatever the
// input, the JSON written stays within its OutputBudget (under a tight cap for every other
// input, so the cap's path is exercised too), and nesting stops at the depth limit.
@testable import Serializers

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    // The plist reader's UTF-16 decoder against the JSON layer's general one.
    let even = Array(input.prefix(size & ~1))
    if !even.isEmpty {
        let decoded = BinaryPlistReader.utf8(fromUTF16BEForTesting: even)
        let general = even.withUnsafeBufferPointer { try? JSONEncodingDetection.transcodeToUTF8($0, .utf16BE) }
        precondition(decoded == general, "the UTF-16 decoders disagree on \(even)")
    }
    do throws(TranscodeError) {
        let budget = OutputBudget(input: size, cap: size % 2 == 0 ? OutputBudget.defaultCap : 2 * size + 16)
        let json = try PlistTranscoder.transcode(input, maxDepth: 64, budget: budget)
        precondition(json.bytes.count <= budget.limit, "\(size) bytes became \(json.bytes.count) bytes of JSON")
    } catch {
        precondition(!error.description.isEmpty, "a failure without a detail")
    }
    return 0
}
