import HTTPCore
import Serializers
import Synchronization
import Telemetry

/// One route's tape (DESIGN §2 `tape:`): its recordings in order, an index from what
/// matching compares to the recordings with those parts (so a lookup is one hash, however
/// long the tape), and where each repeated request is in its sequence. Workers replay and
/// record through the lock; the store's writer thread writes it out.
public final class Tape: Sendable {
    /// `<tapes.dir>/<route>.har`.
    public let path: String
    /// Entries of the file as read that had no answer (status 0) and were passed over.
    public let skipped: Int
    let state: Mutex<State>
    /// Held while the file is written, and while `har()` and `entries` read it: they see
    /// the file either before a write or after it, never the pending entries twice.
    let io = Mutex<Void>(())
    /// Tells the store's writer there is something to write (nothing for a tape made alone).
    let wakeWriter: @Sendable () -> Void

    struct State {
        /// Every recording, in order, while the tape holds them: one a route replays from
        /// does (the index points into them); one only recorded to holds them until its
        /// file can be appended to, then only `pending`.
        var entries: [TapeEntry] = []
        var holding = true
        /// Whether a route replays from this tape (it must hold its entries).
        var keeps = true
        /// Recorded since the last write, in order, as HAR (each exchange is encoded once,
        /// by the worker that recorded it).
        var pending: [[UInt8]] = []
        /// Entries in the file as last read or written.
        var onDisk = 0
        /// The file is one this tape wrote or read in a form it can extend (see
        /// `HARCodec.decodeFile`): a write copies it and adds the pending entries.
        /// Otherwise the next write is whole, from the held entries.
        var appendable = false
        /// The file's size when read, plus what was recorded since.
        var bytes = 0
        /// Key → its sequence (one hash a lookup: the cursor lives beside the list).
        var index: [String: Int] = [:]
        var sequences: [Sequence] = []
        /// Entries by method and path, for naming the nearest recordings on a miss.
        /// Built on the first miss after a recording (a miss is rare, recording is not).
        var byPath: [String: [Int]]?
        var match = TapeMatch()
        var redaction = Redaction()
        /// Counts reloads: a match key made outside the lock is used only under the
        /// settings it was made with.
        var generation = 0
        /// Recorded since the file was last written.
        var dirty = false
        /// Why recording stopped (the file could not be written), if it did.
        var stopped: String?
        /// The file as this tape last read or wrote it.
        var stamp = FileStamp()
        /// Body bytes recorded since the last write, the file's size then, and when.
        var unwritten = 0
        var written = 0
        var lastWrite = 0.0
        /// When the last exchange was recorded.
        var lastRecorded = 0.0
        /// Recording stopped since the writer last looked (it logs why, once).
        var newlyStopped = false
        /// Each entry's answer as replay sends it, made on its first replay.
        var replies: [Replayed?] = []
        /// What a route's serializers made of an entry's answer, by entry: the same route
        /// (the same compiled config) makes the same of the same bytes every time.
        var served: [Int: Served] = [:]
        var servedBytes = 0

        var count: Int { onDisk + pending.count }

        /// A held entry; `key`: its match key, when the tape keeps an index.
        mutating func add(_ entry: TapeEntry, key: String?) {
            let k = entries.count
            entries.append(entry)
            guard keeps else { return }
            replies.append(nil)
            let key = key ?? match.parts(entry.request, redaction: redaction).key
            if let at = index[key] {
                sequences[at].entries.append(k)
            } else {
                index[key] = sequences.count
                sequences.append(Sequence(entries: [k]))
            }
            byPath = nil
        }

        mutating func reindex() {
            let all = entries
            entries = []; replies = []; index = [:]; sequences = []; byPath = nil; served = [:]; servedBytes = 0
            entries.reserveCapacity(all.count)
            for entry in all { add(entry, key: nil) }
        }

        /// After a write: a tape no route replays from lets go of what the file now holds.
        mutating func release() {
            guard !keeps, holding, appendable else { return }
            holding = false
            entries = []; replies = []; index = [:]; sequences = []; byPath = nil; served = [:]; servedBytes = 0
        }

        /// Entries by method and path.
        mutating func paths() -> [String: [Int]] {
            if let byPath { return byPath }
            var built: [String: [Int]] = [:]
            for (k, entry) in entries.enumerated() {
                let parts = match.parts(entry.request, redaction: redaction)
                built[parts.method + " " + parts.path, default: []].append(k)
            }
            byPath = built
            return built
        }
    }

    /// Identical requests' recordings, and how far replay has come through them.
    struct Sequence {
        var entries: [Int]
        var cursor = 0

        /// The next entry, then the last one again.
        mutating func next() -> Int {
            let k = entries[cursor]
            if cursor + 1 < entries.count { cursor += 1 }
            return k
        }
    }

    /// `keeps`: a route replays from it (it holds its entries and an index of them).
    /// `appendable`: the file at `path` holds `entries` in a form new ones can be added to.
    init(path: String, entries: [TapeEntry], match: TapeMatch, redaction: Redaction, fileBytes: Int = 0, stamp: FileStamp = FileStamp(),
         keeps: Bool = true, appendable: Bool = false, skipped: Int = 0, wakeWriter: @escaping @Sendable () -> Void = {}) {
        self.path = path
        self.wakeWriter = wakeWriter
        self.skipped = skipped
        var state = State()
        state.match = match
        state.redaction = redaction
        state.keeps = keeps
        state.entries.reserveCapacity(entries.count)
        for entry in entries { state.add(entry, key: nil) }
        state.onDisk = entries.count
        state.appendable = appendable
        state.bytes = fileBytes
        state.written = fileBytes
        state.stamp = stamp
        state.release()
        self.state = Mutex(state)
    }

    /// A reload's settings: the index is rebuilt for them, sequences start over. False
    /// when `keeps` asks for entries this tape no longer holds (the store reads them).
    func configure(match: TapeMatch, redaction: Redaction, keeps: Bool) -> Bool {
        state.withLock { state in
            guard state.holding || !keeps else { return false }
            state.generation += 1
            state.match = match
            state.redaction = redaction
            state.keeps = keeps
            state.reindex()
            state.release()
            return true
        }
    }

    /// Holds `entries` (the file's, just read) again, with what was recorded since.
    func hold(_ fileEntries: [TapeEntry], match: TapeMatch, redaction: Redaction) {
        state.withLock { state in
            state.match = match
            state.redaction = redaction
            state.generation += 1
            state.keeps = true
            state.holding = true
            state.entries = fileEntries + state.pending.compactMap { try? HARCodec.decodeEntry($0) }
            state.onDisk = fileEntries.count
            state.reindex()
        }
    }

    var isHolding: Bool { state.withLock { $0.holding } }

    /// A recorded answer as replay sends it: the header lines as an upstream's (without
    /// the recording's Date, which is not today's: the response gets serializerd's own).
    public struct Replayed: Sendable {
        /// The entry's place on the tape.
        public let entry: Int
        public let status: Int
        public let headerLines: [UInt8]
        public let contentType: String?
        public let body: [UInt8]
        /// A recorded stream's timing; nil for an answer recorded whole.
        public let chunks: [StreamChunk]?
        /// A recorded WebSocket's messages.
        public let messages: [WebSocketMessage]?

        init(_ entry: TapeEntry, at index: Int) {
            self.entry = index
            chunks = entry.chunks
            messages = entry.messages
            status = entry.status
            var kept = HeaderFields()
            entry.responseHeaders.appending(where: { !Self.date.contains($0) }, to: &kept)
            headerLines = kept.bytes
            contentType = entry.contentType
            body = entry.responseBody
        }

        static let date = HeaderNames(["date"])
    }

    /// A serialized answer kept for the route that made it (`owner`: its identity, so a
    /// reloaded route never gets the old one's output).
    public struct Served: Sendable {
        public let owner: ObjectIdentifier
        public let result: SerializationResult
        public let unsafeNumbers: Int?

        public init(owner: ObjectIdentifier, result: SerializationResult, unsafeNumbers: Int?) {
            self.owner = owner
            self.result = result
            self.unsafeNumbers = unsafeNumbers
        }
    }

    /// Serialized answers kept per tape, at most (each at most a sixteenth of it).
    public static let maxServedBytes = 64 << 20

    /// What `owner` made of entry `k`, if it kept it.
    public func served(_ k: Int, owner: ObjectIdentifier) -> Served? {
        state.withLock { state in state.served[k].flatMap { $0.owner == owner ? $0 : nil } }
    }

    /// Keeps a successful serialization of entry `k` while the budget allows.
    public func keep(_ served: Served, for k: Int) {
        let size = served.result.value?.bytes.count ?? 0
        guard served.result.error == nil, size <= Self.maxServedBytes / 16 else { return }
        state.withLock { state in
            if let old = state.served[k] { state.servedBytes -= old.result.value?.bytes.count ?? 0 }
            guard state.servedBytes + size <= Self.maxServedBytes else { return }
            state.served[k] = served
            state.servedBytes += size
        }
    }

    /// Whether matching compares request headers (or reads the Content-Type of a body).
    public var matchReadsHeaders: Bool { state.withLock { !$0.match.headers.isEmpty || $0.match.body != .ignore } }

    /// The recording for `request`, as replay sends it: identical requests get the
    /// recorded sequence in order, then its last entry again.
    public func replay(_ request: TapeRequest) -> Replayed? {
        let key = self.key(request)
        return state.withLock { state in
            guard let at = state.index[key] else { return nil }
            let k = state.sequences[at].next()
            if let made = state.replies[k] { return made }
            let made = Replayed(state.entries[k], at: k)
            state.replies[k] = made
            return made
        }
    }

    /// Why `request` matched nothing, in words for the `replay-miss` problem: the nearest
    /// recordings (same method and path, else the same path, else the closest paths) and
    /// what differs in each.
    public func missDetail(_ request: TapeRequest) -> String {
        state.withLock { state in
            let asked = state.match.parts(request, redaction: state.redaction)
            let shown = asked.method + " " + asked.path + (asked.query.isEmpty ? "" : "?" + asked.query.joined(separator: "&"))
            guard !state.entries.isEmpty else { return "no recording matches \(shown): the tape \(path) is empty" }
            let byPath = state.paths()
            var candidates = byPath[asked.method + " " + asked.path] ?? []
            if candidates.isEmpty {
                candidates = byPath.filter { $0.key.hasSuffix(" " + asked.path) }.values.flatMap { $0 }
            }
            if candidates.isEmpty {
                let nearest = byPath.keys.sorted {
                    Self.commonPrefix($0, asked.path) > Self.commonPrefix($1, asked.path) || (Self.commonPrefix($0, asked.path) == Self.commonPrefix($1, asked.path) && $0 < $1)
                }
                candidates = nearest.prefix(3).compactMap { byPath[$0]?.first }
            }
            var seen: Set<String> = []
            var described: [String] = []
            for k in candidates where described.count < 3 {
                let parts = state.match.parts(state.entries[k].request, redaction: state.redaction)
                guard seen.insert(parts.key).inserted else { continue }
                let recorded = parts.method + " " + parts.path + (parts.query.isEmpty ? "" : "?" + parts.query.joined(separator: "&"))
                described.append("\(recorded) (differs in: \(state.match.differences(asked, parts).joined(separator: ", ")))")
            }
            return "no recording matches \(shown); nearest: " + described.joined(separator: "; ")
        }
    }

    static func commonPrefix(_ key: String, _ path: String) -> Int {
        let recordedPath = key.split(separator: " ", maxSplits: 1).last.map(String.init) ?? key
        return zip(recordedPath.utf8, path.utf8).prefix { $0 == $1 }.count
    }

    /// The most a tape holds: what serializerd can read back (a recording past it stops).
    public static let maxBytes = TapeFile.maxBytes

    /// Appends an exchange (already redacted), and wakes the store's writer when it has new
    /// work: the first exchange since its last write, or the tape just filled up. True
    /// then (false once recording has stopped, and while the writer already has work).
    @discardableResult
    public func record(_ entry: TapeEntry) -> Bool {
        record(encoded: HARCodec.encode(entry)) { entry }
    }

    /// Appends an exchange as HAR (`HARCodec.encode`, redacted); `entry` is asked for only
    /// when a route replays from this tape (it indexes it). Returns as `record(_:)`.
    @discardableResult
    public func record(encoded: [UInt8], entry: () -> TapeEntry) -> Bool {
        let wake = append(encoded: encoded, entry: entry)
        if wake { wakeWriter() }
        return wake
    }

    private func append(encoded: [UInt8], entry: () -> TapeEntry) -> Bool {
        // The match key outside the lock, and only for a tape a route replays from.
        let (keeps, match, redaction, generation) = state.withLock { ($0.keeps, $0.match, $0.redaction, $0.generation) }
        let indexed = keeps ? { () -> (TapeEntry, String) in
            let made = entry()
            return (made, match.parts(made.request, redaction: redaction).key)
        }() : nil
        return state.withLock { state in
            guard state.stopped == nil else { return false }
            guard state.bytes + encoded.count <= Self.maxBytes else {
                state.stopped = "the tape reached \(Self.maxBytes >> 20) MiB, the most a tape holds"
                state.newlyStopped = true
                return true   // the writer runs, writes what fits and logs why recording stopped
            }
            state.pending.append(encoded)
            if state.holding && state.keeps {
                if let indexed {
                    state.add(indexed.0, key: state.generation == generation ? indexed.1 : nil)
                } else if let decoded = try? HARCodec.decodeEntry(encoded) {
                    state.add(decoded, key: nil)
                }
            }
            state.bytes += encoded.count
            state.unwritten += encoded.count
            state.lastRecorded = Clock.now()
            defer { state.dirty = true }
            return !state.dirty
        }
    }

    /// The match key of `request` under the current settings, made outside the lock.
    func key(_ request: TapeRequest) -> String {
        let (match, redaction) = state.withLock { ($0.match, $0.redaction) }
        return match.parts(request, redaction: redaction).key
    }

    public var count: Int { state.withLock { $0.count } }

    /// Every recording, in order (read back from the file when the tape no longer holds
    /// them).
    public var entries: [TapeEntry] {
        io.withLock { _ in
            let (held, pending) = state.withLock { state in (state.holding ? Array(state.entries.prefix(state.onDisk)) : nil, state.pending) }
            let written = held ?? (try? TapeFile.read(path)).flatMap { $0 }.flatMap { try? HARCodec.decode($0) } ?? []
            return written + pending.compactMap { try? HARCodec.decodeEntry($0) }
        }
    }

    /// About how large the tape is: the file as read, plus the bodies recorded since.
    public var bytes: Int { state.withLock { $0.bytes } }
    public var stopped: String? { state.withLock { $0.stopped } }
}
