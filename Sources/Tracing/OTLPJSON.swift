/// An `ExportTraceServiceRequest` as OTLP/HTTP's JSON encoding writes it (ids as hex,
/// 64-bit integers as decimal strings, enums as numbers, the empty and the zero left
/// out), written straight into bytes: the exporter's thread makes one a batch.
public enum OTLPJSON {
    /// One resource (the service), one scope (serializerd), the spans of `traces`.
    public static func encode(_ traces: ArraySlice<FinishedTrace>, serviceName: String, version: String) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(256 + traces.count * 1400)
        raw(#"{"resourceSpans":[{"resource":{"attributes":["#, &out)
        attribute(SpanAttribute("service.name", serviceName), &out)
        raw(#"]},"scopeSpans":[{"scope":{"name":"serializerd","version":"#, &out)
        string(version, &out)
        raw(#"},"spans":["#, &out)
        var first = true
        for trace in traces {
            span(trace.server, trace: trace, parent: trace.parentSpanID, traceState: trace.traceState, first: &first, &out)
            for child in trace.children {
                span(child, trace: trace, parent: trace.server.spanID, traceState: nil, first: &first, &out)
            }
        }
        raw("]}]}]}", &out)
        return out
    }

    private static func span(_ span: SpanRecord, trace: FinishedTrace, parent: UInt64, traceState: String?, first: inout Bool,
                             _ out: inout [UInt8]) {
        if !first { out.append(UInt8(ascii: ",")) }
        first = false
        raw(#"{"traceId":""#, &out)
        HexID.append(trace.traceHigh, to: &out)
        HexID.append(trace.traceLow, to: &out)
        raw(#"","spanId":""#, &out)
        HexID.append(span.spanID, to: &out)
        out.append(UInt8(ascii: "\""))
        if let traceState, !traceState.isEmpty {
            raw(#","traceState":"#, &out)
            string(traceState, &out)
        }
        if parent != 0 {
            raw(#","parentSpanId":""#, &out)
            HexID.append(parent, to: &out)
            out.append(UInt8(ascii: "\""))
        }
        raw(#","name":"#, &out)
        string(span.name, &out)
        raw(#","kind":"#, &out)
        out.append(UInt8(ascii: "0") + span.kind.rawValue)
        raw(#","startTimeUnixNano":""#, &out)
        decimal(span.start, &out)
        raw(#"","endTimeUnixNano":""#, &out)
        decimal(span.end, &out)
        out.append(UInt8(ascii: "\""))
        if !span.attributes.isEmpty {
            raw(#","attributes":"#, &out)
            attributes(span.attributes, &out)
        }
        if !span.events.isEmpty {
            raw(#","events":["#, &out)
            for (i, event) in span.events.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                raw(#"{"timeUnixNano":""#, &out)
                decimal(event.time, &out)
                raw(#"","name":"#, &out)
                event.name.withUTF8Buffer { string($0, &out) }
                if !event.attributes.isEmpty {
                    raw(#","attributes":"#, &out)
                    attributes(event.attributes, &out)
                }
                out.append(UInt8(ascii: "}"))
            }
            out.append(UInt8(ascii: "]"))
        }
        if let error = span.error {
            raw(#","status":{"message":"#, &out)
            string(error, &out)
            raw(#","code":2}"#, &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    private static func attributes(_ list: [SpanAttribute], _ out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (i, a) in list.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            attribute(a, &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    private static func attribute(_ a: SpanAttribute, _ out: inout [UInt8]) {
        raw(#"{"key":"#, &out)
        a.key.withUTF8Buffer { string($0, &out) }
        switch a.value {
        case .string(let s):
            raw(#","value":{"stringValue":"#, &out)
            string(s, &out)
            raw("}}", &out)
        case .int(let n):
            raw(#","value":{"intValue":""#, &out)
            if n < 0 { out.append(UInt8(ascii: "-")) }
            decimal(n.magnitude, &out)
            raw("\"}}", &out)
        case .bool(let b):
            raw(b ? #","value":{"boolValue":true}}"# : #","value":{"boolValue":false}}"#, &out)
        }
    }

    private static func raw(_ text: StaticString, _ out: inout [UInt8]) {
        text.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    private static func decimal<T: UnsignedInteger>(_ value: T, _ out: inout [UInt8]) {
        var value = UInt64(value)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { tmp in
            var at = 20
            repeat {
                at -= 1
                tmp[at] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            } while value > 0
            out.append(contentsOf: UnsafeBufferPointer(rebasing: tmp[at...]))
        }
    }

    private static func string(_ s: String, _ out: inout [UInt8]) {
        var s = s
        s.withUTF8 { string($0, &out) }
    }

    /// A JSON string: `"` and `\` escaped, control bytes as `\u00XX`; the rest as it is
    /// (Swift strings are valid UTF-8).
    private static func string(_ bytes: UnsafeBufferPointer<UInt8>, _ out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var start = 0
        for (i, c) in bytes.enumerated() where c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") {
            if i > start { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<i])) }
            out.append(UInt8(ascii: "\\"))
            switch c {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(c)
            case 0x0A: out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(UInt8(ascii: "r"))
            case 0x09: out.append(UInt8(ascii: "t"))
            default:
                out.append(contentsOf: "u00".utf8)
                HexID.append(UInt64(c), digits: 2, to: &out)
            }
            start = i + 1
        }
        if start < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...])) }
        out.append(UInt8(ascii: "\""))
    }
}
