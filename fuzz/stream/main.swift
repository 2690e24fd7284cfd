// libFuzzer target for the stream readers (Sources/Serializers/Stream): the SSE event
// parser and the NDJSON / json-seq record splitter, built by fuzz/run.sh. Oracles: a
// whole-input reference reader written from the WHATWG and RFC 7464 rules, the same
// input fed in two pieces and a byte at a time, and the size bound on what is held.
@testable import Serializers

/// The WHATWG event-stream rules over the whole input at once.
func referenceEvents(_ input: [UInt8]) -> [EventStreamParser.Item] {
    var bytes = input[...]
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
    var lines: [[UInt8]] = [], line: [UInt8] = [], i = bytes.startIndex, ended = false
    while i < bytes.endIndex {
        let b = bytes[i]
        if b == 0x0D || b == 0x0A {
            lines.append(line)
            line = []
            if b == 0x0D, i + 1 < bytes.endIndex, bytes[i + 1] == 0x0A { i += 1 }
            ended = true
        } else {
            line.append(b)
            ended = false
        }
        i += 1
    }
    _ = ended   // an unterminated last line is never dispatched
    var items: [EventStreamParser.Item] = [], pending = EventStreamParser.Event()
    for line in lines {
        if line.isEmpty {
            if pending != EventStreamParser.Event() { items.append(.event(pending)) }
            pending = EventStreamParser.Event()
        } else if line[0] == UInt8(ascii: ":") {
            items.append(.comment(Array(line.dropFirst())))
        } else {
            let colon = line.firstIndex(of: UInt8(ascii: ":"))
            let name = Array(colon.map { line[..<$0] } ?? line[...])
            var value = Array(colon.map { line[($0 + 1)...] } ?? [])
            if value.first == 0x20 { value.removeFirst() }
            switch String(decoding: name, as: UTF8.self) {
            case "data": pending.data = pending.data.map { $0 + [0x0A] + value } ?? value
            case "event": pending.event = value
            case "id": if !value.contains(0) { pending.id = value }
            case "retry": if !value.isEmpty, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { pending.retry = value }
            default: break
            }
        }
    }
    return items
}

func events(_ input: [UInt8], maxEvent: Int, pieces: [Int]) -> [EventStreamParser.Item] {
    var parser = EventStreamParser(maxEvent: maxEvent), items: [EventStreamParser.Item] = []
    var start = 0
    for end in pieces + [input.count] where end >= start && end <= input.count {
        input[start..<end].withUnsafeBytes { parser.feed($0) { items.append($0) } }
        start = end
    }
    parser.finish()
    return items
}

func records(_ input: [UInt8], sequence: Bool, maxRecord: Int, pieces: [Int]) -> [[UInt8]?] {
    var splitter = RecordSplitter(maxRecord: maxRecord, sequence: sequence), out: [[UInt8]?] = []
    var start = 0
    for end in pieces + [input.count] where end >= start && end <= input.count {
        input[start..<end].withUnsafeBytes { splitter.feed($0) { out.append($0) } }
        start = end
    }
    splitter.finish { out.append($0) }
    return out
}

func referenceRecords(_ input: [UInt8], sequence: Bool) -> [[UInt8]] {
    let separators: Set<UInt8> = sequence ? [0x0A, 0x1E] : [0x0A]
    return input.split(omittingEmptySubsequences: false) { separators.contains($0) }.compactMap { record in
        var r = record[...]
        while let last = r.last, last == 0x0D || last == 0x20 || last == 0x09 { r = r.dropLast() }
        while let first = r.first, first == 0x20 || first == 0x09 { r = r.dropFirst() }
        return r.isEmpty ? nil : Array(r)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let cut = size == 0 ? 0 : Int(input[0]) % (size + 1)
    let everyByte = size <= 512 ? Array(0...size) : [cut]

    let whole = events(input, maxEvent: 1 << 30, pieces: [])
    precondition(whole == referenceEvents(input), "SSE: the parser and the reference disagree")
    precondition(events(input, maxEvent: 1 << 30, pieces: [cut]) == whole, "SSE: a split at \(cut) changes the events")
    precondition(events(input, maxEvent: 1 << 30, pieces: everyByte) == whole, "SSE: byte-at-a-time changes the events")
    // Bounded: nothing held beyond the limit, whatever the input, and the same blocks
    // skipped however the bytes arrive.
    let limited = events(input, maxEvent: 64, pieces: [])
    precondition(events(input, maxEvent: 64, pieces: everyByte) == limited, "SSE: byte-at-a-time changes what the limit skips")
    for item in events(input, maxEvent: 64, pieces: [cut]) {
        if case .event(let e) = item {
            let held = (e.data?.count ?? 0) + (e.event?.count ?? 0) + (e.id?.count ?? 0) + (e.retry?.count ?? 0)
            precondition(held <= 64, "SSE: an event of \(held) bytes passed a limit of 64")
        }
    }

    for sequence in [false, true] {
        let all = records(input, sequence: sequence, maxRecord: 1 << 30, pieces: [])
        precondition(all.map { $0 ?? [] } == referenceRecords(input, sequence: sequence), "records: the splitter and the reference disagree")
        precondition(records(input, sequence: sequence, maxRecord: 1 << 30, pieces: everyByte) == all, "records: byte-at-a-time differs")
        for record in records(input, sequence: sequence, maxRecord: 32, pieces: [cut]) {
            precondition((record?.count ?? 0) <= 32, "records: a record over the limit was held")
        }
    }
    return 0
}
