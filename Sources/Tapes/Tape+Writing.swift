import HTTPCore
import Synchronization

/// The writer thread's side of a tape: what is due, what was written, the file's pieces.
extension Tape {
    /// What a write of this tape does: add `entries` to a copy of the file (which holds
    /// `onDisk` entries and is still `stamp`), or write `entries` as the whole file.
    enum Write {
        case append(encoded: [[UInt8]], onDisk: Int, stamp: FileStamp)
        case whole(held: [TapeEntry], encoded: [[UInt8]])
    }

    /// The write due now (any with something unwritten when `force`), else nil; what it
    /// takes counts as written. Call with `io` held.
    ///
    /// Unless `force`, a tape is written once recording pauses (half a second without a
    /// new exchange), every second while it is under 4 MiB, and otherwise once what is
    /// unwritten is as large as what is: each write is a whole new file (atomic), so
    /// doubling the gap with the file keeps the bytes copied at most twice those recorded.
    func takeWrite(force: Bool, now: Double) -> Write? {
        state.withLock { state in
            guard state.dirty else { return nil }
            let due = state.unwritten >= max(64 << 10, state.written) || now - state.lastRecorded >= 0.5
                || (state.written < 4 << 20 && now - state.lastWrite >= 1)
            guard force || due else { return nil }
            state.dirty = false
            state.unwritten = 0
            state.lastWrite = now
            let batch = state.pending
            state.pending = []
            if state.appendable { return .append(encoded: batch, onDisk: state.onDisk, stamp: state.stamp) }
            return .whole(held: state.holding ? Array(state.entries.prefix(state.onDisk)) : [], encoded: batch)
        }
    }

    /// A write succeeded: the file holds `onDisk` entries in `fileBytes` bytes.
    func wrote(onDisk: Int, fileBytes: Int) {
        let stamp = FileStamp(path)
        state.withLock { state in
            state.onDisk = onDisk
            state.written = fileBytes
            state.stamp = stamp
            state.appendable = true
            state.release()
        }
    }

    /// The whole tape as HAR: the held entries encoded, or the file as written, with the
    /// pending entries added.
    public func har() -> [UInt8] {
        io.withLock { _ in
            let (held, pending, onDisk, stamp) = state.withLock { state in
                (state.holding ? Array(state.entries.prefix(state.onDisk)) : nil, state.pending, state.onDisk, state.appendable ? state.stamp : nil)
            }
            if let held { return Array(Self.pieces(held.map(HARCodec.encode) + pending).joined()) }
            if let stamp, FileStamp(path) == stamp, let file = (try? TapeFile.read(path)).flatMap({ $0 }), file.count >= HARCodec.tail.count {
                return Array(file.dropLast(HARCodec.tail.count)) + Array(Self.appended(pending, onDisk: onDisk).joined())
            }
            let written = (try? TapeFile.read(path)).flatMap { $0 }.flatMap { try? HARCodec.decode($0) } ?? []
            return Array(Self.pieces(written.map(HARCodec.encode) + pending).joined())
        }
    }

    /// The file in pieces: the head, the entries with their commas, the tail.
    static func pieces(_ encoded: [[UInt8]]) -> [[UInt8]] {
        var out: [[UInt8]] = [HARCodec.head()]
        out.reserveCapacity(2 * encoded.count + 2)
        for (k, entry) in encoded.enumerated() {
            if k > 0 { out.append(Self.comma) }
            out.append(entry)
        }
        out.append(HARCodec.tail)
        return out
    }

    static let comma: [UInt8] = [UInt8(ascii: ",")]

    /// What follows a file's entries (`onDisk` of them) to add `encoded`: the commas, the
    /// entries, the tail.
    static func appended(_ encoded: [[UInt8]], onDisk: Int) -> [[UInt8]] {
        var out: [[UInt8]] = []
        out.reserveCapacity(2 * encoded.count + 1)
        for (k, entry) in encoded.enumerated() {
            if k > 0 || onDisk > 0 { out.append(Self.comma) }
            out.append(entry)
        }
        out.append(HARCodec.tail)
        return out
    }

    /// Whether the file on disk is still the one this tape holds (nothing unwritten, and
    /// no other process has replaced it).
    func isCurrent(with disk: FileStamp) -> Bool {
        state.withLock { $0.dirty || $0.stamp == disk }
    }

    var isDirty: Bool { state.withLock { $0.dirty } }

    /// Why recording stopped, the first time this is asked after it did.
    func takeNewlyStopped() -> String? {
        state.withLock { state in
            guard state.newlyStopped else { return nil }
            state.newlyStopped = false
            return state.stopped
        }
    }

    func stop(_ reason: String) {
        state.withLock { $0.stopped = reason }
    }
}
