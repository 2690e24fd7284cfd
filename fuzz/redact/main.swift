// libFuzzer target for capture's body redaction (Sources/Telemetry/Capture), built by
// fuzz/run.sh. The first byte picks the pointers, the rest is the body. Besides memory
// safety: on valid JSON the tolerant byte-level redactor must give exactly what redacting
// the parsed tree gives, and a body it leaves alone must hold no match at all.
@testable import Serializers
import HTTPCore

let pointerSets: [[String]] = [
    ["/password"], ["/a/b", "/c"], ["/*/token"], ["/0"], ["/a~1b", "/m~0n"], ["/*"], ["/x/*/y/*"], ["/"],
]

func redactTree(_ value: JSONValue, _ pointers: [[[UInt8]]], _ path: [[UInt8]]) -> JSONValue {
    if !path.isEmpty, pointers.contains(where: { p in
        p.count == path.count && zip(p, path).allSatisfy { $0 == [UInt8(ascii: "*")] || $0 == $1 }
    }) {
        return .string("[redacted]")
    }
    switch value {
    case .object(let members):
        return .object(members.map { ($0.0, redactTree($0.1, pointers, path + [Array($0.0.utf8)])) })
    case .array(let items):
        return .array(items.enumerated().map { redactTree($0.element, pointers, path + [Array(String($0.offset).utf8)]) })
    default:
        return value
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let pointers = pointerSets[Int(data[0]) % pointerSets.count]
    let body = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let redaction = Redaction(headers: [], query: [], json: pointers)
    let tokens = pointers.compactMap(Redaction.tokens)
    let json = redaction.body(body, contentType: "application/json")
    let form = redaction.body(body, contentType: "application/x-www-form-urlencoded")
    // Each replaced value is at least one byte; the marker is 12.
    for out in [json, form].compactMap({ $0 }) { precondition(out.count <= 12 * body.count + 12, "output out of bounds") }
    if let tree = try? JSONValue.parse(body, options: JSONReadOptions(allowFragments: true)) {
        let expected = redactTree(tree, tokens, [])
        let got = json.map { out -> JSONValue? in try? JSONValue.parse(out, options: JSONReadOptions(allowFragments: true)) } ?? tree
        precondition(got == expected, "redaction differs from the tree's: \(String(decoding: json ?? body, as: UTF8.self))")
    }
    return 0
}
