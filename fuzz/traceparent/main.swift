// libFuzzer target for W3C `traceparent` (Sources/Tracing/TraceParent.swift), built by
// fuzz/run.sh. The input is read twice. As a field value: whatever the bytes, nothing
// traps, the verdict agrees with a second reading of the specification written here
// without the parser's shortcuts, and what it accepts writes back as version 00 of the
// same parts. As a recipe: the first 25 bytes make ids and flags whose field must read
// back exactly (a zero id refused).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let parsed = bytes.withUnsafeBufferPointer { TraceParent($0) }
    let text = String(decoding: bytes, as: UTF8.self)
    require((parsed != nil) == accepts(bytes), "verdict \(parsed != nil) for \(text.debugDescription)")
    if let parsed {
        let expected = "00" + String(decoding: bytes[2..<53], as: UTF8.self) + String(decoding: bytes[53..<55], as: UTF8.self)
        require(parsed.field == expected, "\(parsed.field) written for \(text.debugDescription)")
    }
    if size >= 25 {
        func word(_ at: Int) -> UInt64 { bytes[at..<(at + 8)].reduce(0) { $0 << 8 | UInt64($1) } }
        let made = TraceParent(traceHigh: word(0), traceLow: word(8), spanID: word(16), flags: bytes[24])
        let read = TraceParent(made.field)
        let valid = made.traceHigh | made.traceLow != 0 && made.spanID != 0
        require(valid ? read == made : read == nil, "\(made.field) read as \(String(describing: read))")
    }
    return 0
}

/// The specification read plainly: `version-traceid-parentid-flags`, lowercase hex of 2,
/// 32, 16 and 2 digits; version ff invalid; version 00 exactly that; a later version may
/// go on after a `-`; neither id all zeros.
func accepts(_ b: [UInt8]) -> Bool {
    let hex = Set("0123456789abcdef".utf8)
    func isHex(_ r: Range<Int>) -> Bool { r.allSatisfy { hex.contains(b[$0]) } }
    func allZero(_ r: Range<Int>) -> Bool { r.allSatisfy { b[$0] == UInt8(ascii: "0") } }
    guard b.count >= 55, isHex(0..<2), b[2] == 0x2D, isHex(3..<35), b[35] == 0x2D, isHex(36..<52), b[52] == 0x2D, isHex(53..<55) else { return false }
    let version = String(decoding: b[0..<2], as: UTF8.self)
    if version == "ff" { return false }
    if version == "00" && b.count != 55 { return false }
    if b.count > 55 && b[55] != 0x2D { return false }
    return !allZero(3..<35) && !allZero(36..<52)
}
