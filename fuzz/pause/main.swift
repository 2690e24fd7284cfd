// libFuzzer target for the pause signals an upstream sends (Sources/Resilience/PauseSignal.swift),
// built by fuzz/run.sh. The input is read twice. As raw field values: whatever the bytes,
// nothing traps and any pause is within (0, maxSeconds]. As a recipe: well-formed
// `RateLimit` lists (policies with quoted or token names, `r`, `t` and other parameters,
// spaces here and there) must pause for exactly the longest `t` of a policy at `r=0`, and
// a `Retry-After` of digits for exactly its value.
import HTTPCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let now = 1_800_000_000.0
    // Raw: the bytes as each field's value (split at NUL into up to four values).
    let parts = bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    let value = { (k: Int) in k < parts.count ? parts[k] : "" }
    for status in [200, 429] {
        let fields = HeaderFields([("Retry-After", value(0)), ("RateLimit", value(1)), ("X-RateLimit-Remaining", value(2)), ("X-RateLimit-Reset", value(3))])
        if let pause = PauseSignal.pause(status: status, headers: fields, wallNow: now) {
            require(pause.seconds > 0 && pause.seconds <= PauseSignal.maxSeconds, "pause \(pause.seconds) out of range")
        }
    }
    // Recipe: each 4 bytes make a policy.
    var members: [String] = [], expected: Double?
    var k = 0
    while k + 4 <= bytes.count && members.count < 32 {
        let (a, b, c, d) = (bytes[k], bytes[k + 1], bytes[k + 2], bytes[k + 3])
        k += 4
        let name = a & 1 == 0 ? "p\(a >> 1)" : "\"q \(a >> 1),;\\\"x\""
        let r = Int(b % 3), t = Int(c) * Int(d % 16 + 1)
        let space = d & 16 == 0 ? "" : " "
        var params = [";r=\(r)", ";t=\(t)"]
        if d & 32 != 0 { params.reverse() }
        if d & 64 != 0 { params.insert(";w=\(c)", at: 1) }
        if d & 128 != 0 { params.append(";note") }
        members.append(space + name + params.joined() + space)
        if r == 0, t > 0 { expected = max(expected ?? 0, Double(t)) }
    }
    let fields = HeaderFields([("RateLimit", members.joined(separator: ","))])
    let read = PauseSignal.pause(status: 200, headers: fields, wallNow: now)
    require(read?.seconds == expected.map { min($0, PauseSignal.maxSeconds) }, "\(members): \(String(describing: read)) for \(String(describing: expected))")
    if size >= 2 {
        let seconds = Int(bytes[0]) << 8 | Int(bytes[1])
        let retry = PauseSignal.pause(status: 503, headers: HeaderFields([("Retry-After", " \(seconds)")]), wallNow: now)
        require(retry?.seconds == (seconds == 0 ? nil : min(Double(seconds), PauseSignal.maxSeconds)), "Retry-After \(seconds): \(String(describing: retry))")
    }
    return 0
}
