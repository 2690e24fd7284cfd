// The tape reader as it was before it walked the document: the whole file parsed into one
// JSONValue, then `log.entries` read from the tree. The walking reader must agree with it
// on every UTF-8 input both read: the same entries, the same skipped count.
@testable import Serializers
func referenceDecode(_ bytes: [UInt8]) -> (entries: [TapeEntry], skipped: Int)? {
    guard let root = try? JSONValue.parse(bytes, options: JSONReadOptions(allowFragments: false, maxDepth: 64)),
          case .object(let top) = root, let log = HARCodec.member("log", top), case .object(let logMembers) = log,
          let entriesValue = HARCodec.member("entries", logMembers), case .array(let values) = entriesValue else { return nil }
    var entries: [TapeEntry] = []
    var skipped = 0
    for value in values {
        let read: TapeEntry?
        do { read = try HARCodec.entry(value) } catch { return nil }
        if let read { entries.append(read) } else { skipped += 1 }
    }
    return (entries, skipped)
}
