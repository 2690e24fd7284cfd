// libFuzzer target for HeaderFields (Sources/HTTPCore/HeaderFields.swift), built by
// fuzz/run.sh. The input is header lines as an upstream might send them. Oracles: the
// fields read match a plain reference reading of the lines (split at LF, a CR before it
// dropped, name up to the first colon, value trimmed of spaces and tabs); appending the
// fields read makes lines that read back as the same fields; `first` finds the first
// field of a name in any case; the end-to-end copy keeps exactly the fields that no
// Connection field names. The reply writer's whole copy (ReplyHead.addVerbatim) takes
// only lines it may send as they are: each `name: value` CRLF with no other control
// byte, no Connection, at most one Date; what it takes is the input byte for byte, and
// what it refuses it leaves unwritten.
import HTTPCore

func reference(_ bytes: [UInt8]) -> [([UInt8], [UInt8])] {
    var out: [([UInt8], [UInt8])] = []
    for var line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init) {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
        var value = Array(line[(colon + 1)...])
        line = Array(line[..<colon])
        while let first = value.first, first == 0x20 || first == 0x09 { value.removeFirst() }
        while let last = value.last, last == 0x20 || last == 0x09 || last == 0x0D { value.removeLast() }
        out.append((line, value))
    }
    return out
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let fields = HeaderFields(lines: bytes)
    var read: [([UInt8], [UInt8])] = []
    fields.forEach { read.append((Array($0), Array($1))) }
    let expected = reference(bytes)
    precondition(read.count == expected.count && zip(read, expected).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }, "fields differ from the reference")
    // Written again field by field (names and values without CR or LF), they read back the same.
    var again = HeaderFields()
    for (name, value) in read where !name.contains(0x0D) && !value.contains(0x0D) && !value.contains(0x0A) {
        name.withUnsafeBufferPointer { n in value.withUnsafeBufferPointer { again.append(name: n, value: $0) } }
    }
    var reread: [([UInt8], [UInt8])] = []
    again.forEach { reread.append((Array($0), Array($1))) }
    let kept = read.filter { !$0.0.contains(0x0D) && !$0.1.contains(0x0D) && !$0.1.contains(0x0A) }
    precondition(reread.count == kept.count && zip(reread, kept).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }, "appended fields do not read back")
    if let name = read.last?.0, name.allSatisfy({ $0 < 0x80 }) {
        let text = String(decoding: name, as: UTF8.self)
        let firstOfName = read.first { String(decoding: $0.0, as: UTF8.self).lowercased() == text.lowercased() }
        precondition(fields.first(text.uppercased()) == firstOfName.map { String(decoding: $0.1, as: UTF8.self) }, "first() missed")
        var visited: [UInt8]?
        let found = fields.visitFirst(HeaderNames([text])) { visited = Array($0) }
        precondition(found == (firstOfName != nil) && visited == firstOfName?.1, "visitFirst() and the reference disagree")
    }
    var forwarded = HeaderFields()
    fields.appendEndToEnd(where: { _ in true }, to: &forwarded)
    var copied = 0
    forwarded.forEach { _, _ in copied += 1 }
    precondition(copied <= read.count, "end-to-end copied more fields than there are")
    checkVerbatim(fields, read: read)
    return 0
}

func checkVerbatim(_ fields: HeaderFields, read: [([UInt8], [UInt8])]) {
    var head = ReplyHead(status: 200, capacity: 8)
    let statusLine = head.count
    guard let dated = head.addVerbatim(fields) else {
        precondition(head.count == statusLine, "a refused copy wrote bytes")
        return
    }
    let bytes = fields.bytes
    precondition(Array(head.bytes[statusLine...]) == bytes, "the copy is not the input")
    for (k, c) in bytes.enumerated() where c < 0x20 {
        precondition(c == 0x0D && k + 1 < bytes.count && bytes[k + 1] == 0x0A || c == 0x0A && k > 0 && bytes[k - 1] == 0x0D,
                     "a control byte other than CRLF was copied")
    }
    let lines = bytes.split(separator: 0x0A).count
    precondition(lines == read.count, "a line without a colon was copied")
    let names = read.map { String(decoding: $0.0, as: UTF8.self).lowercased() }
    precondition(!names.contains("connection") && names.filter { $0 == "date" }.count == (dated ? 1 : 0), "Connection or Date copied")
}
