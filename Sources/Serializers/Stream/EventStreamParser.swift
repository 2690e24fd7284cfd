import HTTPCore

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
    /// The part of an unfinished line that came in earlier reads.
    private var line: [UInt8] = []
    /// The current line has bytes (held in `line` unless skipping).
    private var lineStarted = false
    private var pending = Event()
    /// The pending block's data, in storage kept from event to event: an event's data is
    /// handed over as this array and, once the consumer lets it go, written over by the
    /// next (copied only if the consumer kept it). Spare room is kept for the JSON
    /// normalizer, which returns data that is already normal as itself.
    private var data: [UInt8] = []
    private var hasData = false
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
                Self.bom.withUnsafeBytes { take(UnsafeRawBufferPointer(rebasing: $0[..<bomMatched])) }
            }
        }
        while i < n {
            if afterCR {
                afterCR = false
                if bytes[i] == 0x0A {
                    i += 1
                    continue
                }
            }
            let end = bytes.lineBreak(from: i, to: n)
            let piece = UnsafeRawBufferPointer(rebasing: bytes[i..<end])
            // The line goes on in the next read.
            guard end < n else { return take(piece) }
            afterCR = bytes[end] == 0x0D
            endLine(piece, emit)
            i = end + 1
        }
    }

    /// The stream ended: an unfinished block is dropped (as the WHATWG parser does).
    public mutating func finish() {
        line.removeAll()
        lineStarted = false
        pending = Event()
        data = []
        hasData = false
        held = 0
        skipping = false
    }

    /// Part of a line that has not ended yet.
    private mutating func take(_ piece: UnsafeRawBufferPointer) {
        guard !piece.isEmpty else { return }
        lineStarted = true
        guard !skipping else { return }
        if held + line.count + piece.count > maxEvent {
            skipping = true
            line.removeAll()
        } else {
            line.append(contentsOf: piece)
        }
    }

    /// A line ended; `rest` is its part in this read. A line that came whole in one read
    /// is read where it lies, without a copy.
    private mutating func endLine(_ rest: UnsafeRawBufferPointer, _ emit: (Item) -> Void) {
        guard lineStarted || !rest.isEmpty else { return endBlock(emit) }
        defer { lineStarted = false }
        if !lineStarted {
            if skipping { return }
            if held + rest.count > maxEvent { return skipping = true }
            return field(rest, emit)
        }
        take(rest)
        if skipping { return }
        let whole = line
        line = []
        whole.withUnsafeBytes { field($0, emit) }
        line = whole
        line.removeAll(keepingCapacity: line.capacity <= 4096)
    }

    private mutating func endBlock(_ emit: (Item) -> Void) {
        if skipping {
            emit(.tooLong)
        } else if hasData || pending != Event() {
            if hasData { pending.data = data }
            emit(.event(pending))
        }
        pending = Event()
        hasData = false
        data.removeAll(keepingCapacity: data.capacity <= Self.keptCapacity)
        held = 0
        skipping = false
    }

    /// One non-empty line of the pending block.
    private mutating func field(_ line: UnsafeRawBufferPointer, _ emit: (Item) -> Void) {
        if line[0] == UInt8(ascii: ":") {
            return emit(.comment(Array(line[1...])))
        }
        let colon = line.firstIndex(ofByte: UInt8(ascii: ":"), from: 0, to: line.count)
        let name = UnsafeRawBufferPointer(rebasing: line[..<(colon ?? line.count)])
        var valueStart = colon.map { $0 + 1 } ?? line.count
        if valueStart < line.count, line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
        let value = UnsafeRawBufferPointer(rebasing: line[valueStart...])
        held += line.count + 1
        if Self.is(name, Self.data) {
            if hasData {
                data.append(0x0A)
            } else {
                hasData = true
                data.reserveCapacity(value.count + BodyRoom.bytes)
            }
            data.append(contentsOf: value)
        } else if Self.is(name, Self.event) {
            pending.event = Array(value)
        } else if Self.is(name, Self.id) {
            // An id with NUL is ignored (WHATWG).
            if value.firstIndex(ofByte: 0, from: 0, to: value.count) == nil { pending.id = Array(value) }
        } else if Self.is(name, Self.retry) {
            if !value.isEmpty, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { pending.retry = Array(value) }
        }
    }

    /// Data storage kept between events up to this; a larger event's goes with it.
    static let keptCapacity = 64 << 10

    private static func `is`(_ name: UnsafeRawBufferPointer, _ field: [UInt8]) -> Bool {
        guard name.count == field.count else { return false }
        for k in 0..<name.count where name[k] != field[k] { return false }
        return true
    }

    static let data = Array("data".utf8), event = Array("event".utf8), id = Array("id".utf8), retry = Array("retry".utf8)
}
