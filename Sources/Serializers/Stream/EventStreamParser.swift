/// An incremental `text/event-stream` reader (WHATWG HTML, "Parsing an event stream"):
/// lines end in CR LF, LF or CR, in any mix, even split across reads; `data` lines join
/// with LF; `event`, `id` and `retry` are kept as sent; a line starting with `:` is a
/// comment; one leading BOM is dropped. What it holds is bounded by `maxEvent`: a longer
/// line or event is skipped to its end and reported as `tooLong`, never held.
public struct EventStreamParser {
    public struct Event: Equatable {
        /// The data lines joined by LF; nil when the block had no `data` line.
        public var data: [UInt8]?
        public var event: [UInt8]?
        public var id: [UInt8]?
        public var retry: [UInt8]?

        public init(data: [UInt8]? = nil, event: [UInt8]? = nil, id: [UInt8]? = nil, retry: [UInt8]? = nil) {
            self.data = data
            self.event = event
            self.id = id
            self.retry = retry
        }
    }

    public enum Item: Equatable {
        /// A block ended by an empty line (an event when it has data).
        case event(Event)
        /// A comment line's text after the colon (keep-alives).
        case comment([UInt8])
        /// A block longer than `maxEvent` bytes, skipped.
        case tooLong
    }

    public let maxEvent: Int
    private var line: [UInt8] = []
    private var pending = Event()
    /// Bytes the pending block holds.
    private var held = 0
    /// The pending block went over `maxEvent`: lines are dropped until its end.
    private var skipping = false
    /// The last byte was a CR: an LF right after it ends nothing more.
    private var afterCR = false
    private var started = false
    private var bomMatched = 0
    static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]

    public init(maxEvent: Int) {
        self.maxEvent = maxEvent
    }

    public mutating func feed(_ bytes: UnsafeRawBufferPointer, _ emit: (Item) -> Void) {
        var i = 0
        let n = bytes.count
        // The BOM may arrive split across reads: matched a byte at a time.
        while !started, i < n {
            if bytes[i] == Self.bom[bomMatched] {
                bomMatched += 1
                i += 1
                if bomMatched == Self.bom.count { started = true }
            } else {
                started = true
                line.append(contentsOf: Self.bom[..<bomMatched])
            }
        }
        while i < n {
            let byte = bytes[i]
            if afterCR {
                afterCR = false
                if byte == 0x0A {
                    i += 1
                    continue
                }
            }
            if byte == 0x0D || byte == 0x0A {
                afterCR = byte == 0x0D
                endLine(emit)
                i += 1
                continue
            }
            // The rest of this line in one copy.
            var end = i + 1
            while end < n, bytes[end] != 0x0D, bytes[end] != 0x0A { end += 1 }
            if !skipping {
                if held + line.count + (end - i) > maxEvent {
                    skipping = true
                    line.removeAll()
                } else {
                    line.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[i..<end]))
                }
            }
            i = end
        }
    }

    /// The stream ended: an unfinished block is dropped (as the WHATWG parser does).
    public mutating func finish() {
        line.removeAll()
        pending = Event()
        held = 0
        skipping = false
    }

    private mutating func endLine(_ emit: (Item) -> Void) {
        defer { line.removeAll(keepingCapacity: line.capacity <= 4096) }
        if line.isEmpty {
            if skipping {
                emit(.tooLong)
            } else if pending != Event() {
                emit(.event(pending))
            }
            pending = Event()
            held = 0
            skipping = false
            return
        }
        if skipping { return }
        if line[0] == UInt8(ascii: ":") {
            return emit(.comment(Array(line[1...])))
        }
        let colon = line.firstIndex(of: UInt8(ascii: ":"))
        let name = colon.map { line[..<$0] } ?? line[...]
        var value = colon.map { line[($0 + 1)...] } ?? []
        if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        held += line.count + 1
        switch Array(name) {
        case Self.data:
            if pending.data == nil {
                pending.data = Array(value)
            } else {
                pending.data!.append(0x0A)
                pending.data!.append(contentsOf: value)
            }
        case Self.event: pending.event = Array(value)
        // An id with NUL is ignored (WHATWG).
        case Self.id: if !value.contains(0) { pending.id = Array(value) }
        case Self.retry: if !value.isEmpty, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { pending.retry = Array(value) }
        default: break
        }
    }

    static let data = Array("data".utf8), event = Array("event".utf8), id = Array("id".utf8), retry = Array("retry".utf8)
}
