import HTTPCore

/// An incremental NDJSON / JSON Lines / JSON text sequence reader: records end in LF (a
/// CR before it is dropped); for `application/json-seq` (RFC 7464) each record also
/// starts with RS, and RS alone ends the previous one. Blank records are skipped. A
/// record longer than `maxRecord` is skipped to its end and reported as `nil`.
public struct RecordSplitter {
    public let maxRecord: Int
    public let sequence: Bool
    private var record: [UInt8] = []
    private var skipping = false

    public init(maxRecord: Int, sequence: Bool) {
        self.maxRecord = maxRecord
        self.sequence = sequence
    }

    /// `emit(nil)`: a record over the limit was skipped.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, _ emit: ([UInt8]?) -> Void) {
        var i = 0
        let n = bytes.count
        while i < n {
            let byte = bytes[i]
            if byte == 0x0A || (sequence && byte == 0x1E) {
                end(emit)
                i += 1
                continue
            }
            var stop = bytes.firstIndex(ofByte: 0x0A, from: i + 1, to: n) ?? n
            if sequence { stop = bytes.firstIndex(ofByte: 0x1E, from: i + 1, to: stop) ?? stop }
            if !skipping {
                if record.count + (stop - i) > maxRecord {
                    skipping = true
                    record.removeAll()
                } else {
                    record.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[i..<stop]))
                }
            }
            i = stop
        }
    }

    /// The stream ended: a last record without its LF still counts.
    public mutating func finish(_ emit: ([UInt8]?) -> Void) {
        end(emit)
    }

    private mutating func end(_ emit: ([UInt8]?) -> Void) {
        defer { record.removeAll(keepingCapacity: record.capacity <= 4096) }
        if skipping {
            skipping = false
            return emit(nil)
        }
        var end = record.count
        while end > 0, record[end - 1] == 0x0D || record[end - 1] == 0x20 || record[end - 1] == 0x09 { end -= 1 }
        var start = 0
        while start < end, record[start] == 0x20 || record[start] == 0x09 { start += 1 }
        guard start < end else { return }
        emit(start == 0 && end == record.count ? record : Array(record[start..<end]))
    }
}
