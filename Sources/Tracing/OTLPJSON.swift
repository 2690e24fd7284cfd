/// An `ExportTraceServiceRequest` as OTLP/HTTP's JSON encoding writes it (ids as hex,
/// 64-bit integers as decimal strings, enums as numbers, the empty and the zero left
/// out), written straight into bytes: the exporter's thread makes one a batch.
public enum OTLPJSON {
    /// One resource (the service), one scope (serializerd), the spans of `traces`.
    public static func encode(_ traces: ArraySlice<FinishedTrace>, serviceName: String, version: String) -> [UInt8] {
        var out = ByteWriter(capacity: 256 + traces.count * 1600)
        out.raw(#"{"resourceSpans":[{"resource":{"attributes":["#)
        attribute(SpanAttribute("service.name", serviceName), &out)
        out.raw(#"]},"scopeSpans":[{"scope":{"name":"serializerd","version":"#)
        out.string(version)
        out.raw(#"},"spans":["#)
        var first = true
        for t in traces.indices {
            span(traces[t].server, trace: traces[t], parent: traces[t].parentSpanID, traceState: traces[t].traceState, first: &first, &out)
            for c in traces[t].children.indices {
                span(traces[t].children[c], trace: traces[t], parent: traces[t].server.spanID, traceState: nil, first: &first, &out)
            }
        }
        out.raw("]}]}]}")
        return out.finish()
    }

    private static func span(_ span: borrowing SpanRecord, trace: borrowing FinishedTrace, parent: UInt64, traceState: String?,
                             first: inout Bool, _ out: inout ByteWriter) {
        out.raw(first ? #"{"traceId":""# : #",{"traceId":""#)
        first = false
        out.hex(trace.traceHigh)
        out.hex(trace.traceLow)
        out.raw(#"","spanId":""#)
        out.hex(span.spanID)
        out.byte(UInt8(ascii: "\""))
        if let traceState, !traceState.isEmpty {
            out.raw(#","traceState":"#)
            out.string(traceState)
        }
        if parent != 0 {
            out.raw(#","parentSpanId":""#)
            out.hex(parent)
            out.byte(UInt8(ascii: "\""))
        }
        out.raw(#","name":"#)
        out.string(span.name)
        out.raw(#","kind":"#)
        out.byte(UInt8(ascii: "0") + span.kind.rawValue)
        out.raw(#","startTimeUnixNano":""#)
        out.decimal(span.start)
        out.raw(#"","endTimeUnixNano":""#)
        out.decimal(span.end)
        out.byte(UInt8(ascii: "\""))
        if !span.attributes.isEmpty {
            out.raw(#","attributes":"#)
            attributes(span.attributes, &out)
        }
        if !span.events.isEmpty {
            out.raw(#","events":["#)
            for i in span.events.indices {
                out.raw(i == 0 ? #"{"timeUnixNano":""# : #",{"timeUnixNano":""#)
                out.decimal(span.events[i].time)
                out.raw(#"","name":"#)
                span.events[i].name.withUTF8Buffer { out.string($0) }
                if !span.events[i].attributes.isEmpty {
                    out.raw(#","attributes":"#)
                    attributes(span.events[i].attributes, &out)
                }
                out.byte(UInt8(ascii: "}"))
            }
            out.byte(UInt8(ascii: "]"))
        }
        if let error = span.error {
            out.raw(#","status":{"message":"#)
            out.string(error)
            out.raw(#","code":2}"#)
        }
        out.byte(UInt8(ascii: "}"))
    }

    private static func attributes(_ list: borrowing [SpanAttribute], _ out: inout ByteWriter) {
        out.byte(UInt8(ascii: "["))
        for i in list.indices {
            if i > 0 { out.byte(UInt8(ascii: ",")) }
            attribute(list[i], &out)
        }
        out.byte(UInt8(ascii: "]"))
    }

    private static func attribute(_ a: borrowing SpanAttribute, _ out: inout ByteWriter) {
        out.raw(#"{"key":"#)
        // Keys are the semantic conventions' names: nothing to escape.
        out.byte(UInt8(ascii: "\""))
        a.key.withUTF8Buffer { out.bytes($0) }
        out.byte(UInt8(ascii: "\""))
        switch a.value {
        case .string(let s):
            out.raw(#","value":{"stringValue":"#)
            out.string(s)
            out.raw("}}")
        case .int(let n):
            out.raw(#","value":{"intValue":""#)
            if n < 0 { out.byte(UInt8(ascii: "-")) }
            out.decimal(UInt64(n.magnitude))
            out.raw("\"}}")
        case .bool(let b):
            out.raw(b ? #","value":{"boolValue":true}}"# : #","value":{"boolValue":false}}"#)
        }
    }
}

/// Bytes written through a pointer into storage that grows by doubling: one capacity
/// check per write, none per byte.
struct ByteWriter {
    private var storage: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var count = 0

    init(capacity: Int) {
        self.capacity = max(64, capacity)
        storage = .allocate(capacity: self.capacity)
    }

    /// The bytes written; the writer is spent.
    mutating func finish() -> [UInt8] {
        defer { storage.deallocate() }
        return Array(UnsafeBufferPointer(start: storage, count: count))
    }

    @inline(__always) private mutating func reserve(_ n: Int) {
        guard count + n > capacity else { return }
        var grown = capacity * 2
        while grown < count + n { grown *= 2 }
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        bigger.update(from: storage, count: count)
        storage.deallocate()
        storage = bigger
        capacity = grown
    }

    @inline(__always) mutating func byte(_ b: UInt8) {
        reserve(1)
        storage[count] = b
        count += 1
    }

    @inline(__always) mutating func bytes(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (storage + count).update(from: base, count: bytes.count)
        count += bytes.count
    }

    @inline(__always) mutating func raw(_ text: StaticString) {
        let n = text.utf8CodeUnitCount
        reserve(n)
        (storage + count).update(from: text.utf8Start, count: n)
        count += n
    }

    /// 16 lowercase hex digits.
    @inline(__always) mutating func hex(_ value: UInt64) {
        reserve(16)
        let digits: StaticString = "0123456789abcdef"
        let table = digits.utf8Start
        for i in 0..<16 { storage[count + i] = table[Int((value >> UInt64(60 - 4 * i)) & 0xF)] }
        count += 16
    }

    /// Decimal digits, two at a time from a table.
    mutating func decimal(_ value: UInt64) {
        reserve(20)
        var digits = 1, rest = value
        while rest >= 100 { rest /= 100; digits += 2 }
        if rest >= 10 { digits += 1 }
        let pairs: StaticString = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
        let table = pairs.utf8Start
        var v = value, at = count + digits
        while v >= 100 {
            let pair = Int(v % 100) * 2
            v /= 100
            at -= 2
            storage[at] = table[pair]
            storage[at + 1] = table[pair + 1]
        }
        if v >= 10 {
            storage[at - 2] = table[Int(v) * 2]
            storage[at - 1] = table[Int(v) * 2 + 1]
        } else {
            storage[at - 1] = UInt8(ascii: "0") + UInt8(v)
        }
        count += digits
    }

    mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { string($0) }
    }

    /// A JSON string: `"` and `\` escaped, control bytes as `\u00XX`, the rest as it is
    /// (Swift strings are valid UTF-8). Runs without an escape are copied whole.
    mutating func string(_ text: UnsafeBufferPointer<UInt8>) {
        reserve(text.count + 2)
        storage[count] = UInt8(ascii: "\"")
        count += 1
        guard let base = text.baseAddress else { return byte(UInt8(ascii: "\"")) }
        var start = 0, i = 0
        let n = text.count
        while i < n {
            let c = base[i]
            if c >= 0x20 && c != UInt8(ascii: "\"") && c != UInt8(ascii: "\\") { i += 1; continue }
            if i > start { bytes(UnsafeBufferPointer(start: base + start, count: i - start)) }
            switch c {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): byte(UInt8(ascii: "\\")); byte(c)
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            default:
                raw("\\u00")
                let digits: StaticString = "0123456789abcdef"
                byte(digits.utf8Start[Int(c >> 4)])
                byte(digits.utf8Start[Int(c & 0xF)])
            }
            i += 1
            start = i
        }
        if start < n { bytes(UnsafeBufferPointer(start: base + start, count: n - start)) }
        byte(UInt8(ascii: "\""))
    }
}
