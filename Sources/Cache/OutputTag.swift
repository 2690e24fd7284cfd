import HTTPCore

/// serializerd's strong entity tag for a normalized output (DESIGN §3): a 64-bit hash of
/// the bytes and their length, so equal output always carries an equal tag, in every
/// worker and across restarts. Eight bytes a step: a 100 KB output costs about 13,000
/// multiplications, paid once when the entry is stored.
public enum OutputTag {
    public static func of(_ bytes: [UInt8]) -> String {
        "\"" + Hex.string(hash(bytes), width: 16) + "-" + Hex.string(UInt64(bytes.count)) + "\""
    }

    /// The 64-bit hash the tag is made of (also a route fingerprint's).
    public static func hash(_ bytes: [UInt8]) -> UInt64 {
        var h: UInt64 = 0x243F_6A88_85A3_08D3 ^ UInt64(bytes.count)
        bytes.withUnsafeBytes { raw in
            var at = 0
            while at + 8 <= raw.count {
                h = mix(h ^ UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)))
                at += 8
            }
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while at < raw.count {
                tail |= UInt64(raw[at]) << shift
                shift += 8
                at += 1
            }
            h = mix(h ^ tail ^ (0xFF << 56))
        }
        return finalized(h)
    }

    @inline(__always) static func mix(_ x: UInt64) -> UInt64 {
        let r = (x << 31) | (x >> 33)
        return r &* 0x9E37_79B9_7F4A_7C15
    }

    /// MurmurHash3's 64-bit finalizer: every input bit reaches every output bit.
    static func finalized(_ x: UInt64) -> UInt64 {
        var k = x
        k ^= k >> 33
        k = k &* 0xFF51_AFD7_ED55_8CCD
        k ^= k >> 33
        k = k &* 0xC4CE_B9FE_1A85_EC53
        k ^= k >> 33
        return k
    }

    /// Whether an `If-None-Match` field value names `tag` (RFC 9110 §13.1.2: weak
    /// comparison, `*` matches any). Entity tags are read as the RFC writes them; a
    /// malformed member ends the list.
    public static func ifNoneMatch(_ field: String, matches tag: String) -> Bool {
        let b = Array(field.utf8)
        let want = Array(tag.utf8)
        var k = 0
        while k < b.count {
            while k < b.count, b[k] == 0x20 || b[k] == 0x09 || b[k] == UInt8(ascii: ",") { k += 1 }
            guard k < b.count else { break }
            if b[k] == UInt8(ascii: "*") { return true }
            if b[k] == UInt8(ascii: "W"), k + 1 < b.count, b[k + 1] == UInt8(ascii: "/") { k += 2 }
            guard k < b.count, b[k] == UInt8(ascii: "\"") else { return false }
            let start = k
            k += 1
            while k < b.count, b[k] != UInt8(ascii: "\"") { k += 1 }
            guard k < b.count else { return false }
            k += 1
            if b[start..<k].elementsEqual(want) { return true }
        }
        return false
    }
}
