// libFuzzer target for property lists (binary and XML, Sources/Serializers), built by
// fuzz/run.sh. Besides memory safety it checks the bounded-work contract: whatever the
// input, the JSON written stays within OutputBound's linear limit (plus the one object
// that may cross it before the check), and nesting stops at the depth limit.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    do throws(TranscodeError) {
        let json = try PlistTranscoder.transcode(input, maxDepth: 64)
        precondition(json.bytes.count <= OutputBound.limit(forInput: size) + 2 * size + 64,
                     "\(size) bytes became \(json.bytes.count) bytes of JSON")
    } catch {
        precondition(!error.description.isEmpty, "a failure without a detail")
    }
    return 0
}
