// libFuzzer target for network conditions (Sources/Network), built by fuzz/run.sh: the
// Serializerd-Fault and Serializerd-Chaos parsers, and chaos applied to JSON, XML and
// property-list answers. The first byte picks what runs. Besides memory safety: a parsed
// fault is one the daemon may inject, pointers stay within their bound, an answer no
// operation changed keeps its body, and damage never multiplies the body's size.
@testable import Serializers
import HTTPCore

let kinds = ["application/json", "application/xml", "application/x-plist", "text/html"]
let operationSets = [
    "drop=/a", "null=/a/0", "string=/*/*", "singleton=/a", "drop=/*; singleton=/*/*; string=/*/0",
    "null=/rss/channel/item/*/t; drop=/rss/@v", "html_200; drop=/a", "content_type=text/plain; string=/k",
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let selector = Int(data[0])
    let rest = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let text = String(decoding: rest, as: UTF8.self)
    switch selector % 3 {
    case 0:
        if let asked = try? FaultRequest.parse(text) {
            if case .status(let code) = asked.fault { precondition(Fault.statuses.contains(code)) }
            precondition((asked.latency ?? 0) >= 0 && (asked.down ?? 1) > 0 && (asked.up ?? 1) > 0)
        }
    case 1:
        if let operations = try? ChaosOperation.parse(text) {
            precondition(operations.count <= Directives.maxCount)
            for operation in operations {
                switch operation {
                case .drop(let p), .null(let p), .string(let p), .singleton(let p): precondition(p.tokens.count <= JSONPointer.maxTokens)
                case .html200, .contentType: break
                }
            }
        }
    default:
        let operations = (try? ChaosOperation.parse(operationSets[(selector / 3) % operationSets.count])) ?? []
        let type = kinds[(selector / 24) % kinds.count]
        let reply = UpstreamResponse(status: 201, contentType: type, body: rest)
        let (out, applied) = Chaos.apply(operations, to: reply, maxDepth: 64)
        if applied.isEmpty { precondition(out.body == rest && out.status == 201, "unreported damage") }
        if !applied.contains("html_200") {
            precondition(out.body.count <= 16 * rest.count + 256, "damage grew the body \(rest.count) → \(out.body.count)")
        }
    }
    return 0
}
