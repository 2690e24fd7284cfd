#if canImport(Glibc)
import Glibc
#endif

/// HTTP dates (RFC 9110 §5.6.7).
public enum HTTPDate {
    /// An IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`, the one form a sender may
    /// generate: a date an upstream sent in another form is not passed on. Checked on every
    /// reply that forwards an upstream's Date: straight-line, nothing allocated.
    public static func isValid(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { v -> Bool in
            guard v.count == 29 else { return false }
            @inline(__always) func digits(_ at: Int) -> Int? {
                let a = v[at] &- 0x30, b = v[at + 1] &- 0x30
                return a < 10 && b < 10 ? Int(a) * 10 + Int(b) : nil
            }
            @inline(__always) func word(_ at: Int) -> UInt32 { UInt32(v[at]) << 16 | UInt32(v[at + 1]) << 8 | UInt32(v[at + 2]) }
            guard v[3] == 0x2C, v[4] == 0x20, v[7] == 0x20, v[11] == 0x20, v[16] == 0x20, v[19] == 0x3A, v[22] == 0x3A,
                  v[25] == 0x20, v[26] == 0x47, v[27] == 0x4D, v[28] == 0x54,                         // " GMT"
                  let day = digits(5), digits(12) != nil, digits(14) != nil, let hour = digits(17), let minute = digits(20),
                  let second = digits(23) else { return false }
            return (1...31).contains(day) && hour <= 23 && minute <= 59 && second <= 60
                && days.contains(word(0)) && months.contains(word(8))
        }
    }

    /// The IMF-fixdate for `unixSeconds` (whole seconds; the fraction dropped).
    public static func format(unixSeconds: Double) -> String {
        var t = time_t(unixSeconds.rounded(.down))
        var parts = tm()
        gmtime_r(&t, &parts)
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 40) { buffer in
            let n = strftime(buffer.baseAddress!, 40, "%a, %d %b %Y %H:%M:%S GMT", &parts)
            return String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress!, count: n), as: UTF8.self)
        }
    }

    /// Seconds since the Unix epoch of an HTTP-date in any of the three forms a recipient
    /// must accept (RFC 9110 §5.6.7): IMF-fixdate, RFC 850 (`Sunday, 06-Nov-94 08:49:37
    /// GMT`, two-digit years read as the nearest century that is not more than 50 years
    /// ahead) and asctime (`Sun Nov  6 08:49:37 1994`); nil for anything else.
    public static func seconds(_ text: String, now: Double = Clock.wall()) -> Double? {
        let b = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from >= 0, count > 0, from + count <= b.count else { return nil }
            var v = 0
            for k in from..<from + count {
                let d = b[k] &- 0x30
                guard d < 10 else { return nil }
                v = v * 10 + Int(d)
            }
            return v
        }
        func month(_ at: Int) -> Int? {
            guard at + 3 <= b.count else { return nil }
            let w = UInt32(b[at]) << 16 | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2])
            return months.firstIndex(of: w).map { $0 + 1 }
        }
        func clock(_ at: Int) -> (Int, Int, Int)? {
            guard at + 8 <= b.count, b[at + 2] == 0x3A, b[at + 5] == 0x3A, let h = number(at, 2), let m = number(at + 3, 2),
                  let s = number(at + 6, 2), h < 24, m < 60, s <= 60 else { return nil }
            return (h, m, s)
        }
        var year: Int, mon: Int, day: Int, time: (Int, Int, Int)
        if isValid(text) {
            guard let d = number(5, 2), let m = month(8), let y = number(12, 4), let t = clock(17) else { return nil }
            (year, mon, day, time) = (y, m, d, t)
        } else if let comma = b.firstIndex(of: 0x2C), comma >= 6, comma + 24 == b.count, b[comma + 1] == 0x20,
                  b[comma + 4] == 0x2D, b[comma + 8] == 0x2D, b[comma + 11] == 0x20, b[comma + 20] == 0x20,
                  b[(comma + 21)...].elementsEqual("GMT".utf8),
                  let d = number(comma + 2, 2), let m = month(comma + 5), let yy = number(comma + 9, 2), let t = clock(comma + 12) {
            // RFC 850: the century that puts the year no more than 50 years ahead of now.
            let current = Int(UTCTimestamp.format(unixSeconds: now, fraction: .milliseconds).prefix(4)) ?? 2000
            var y = current / 100 * 100 + yy
            if y > current + 50 { y -= 100 }
            (year, mon, day, time) = (y, m, d, t)
        } else if b.count == 24, b[3] == 0x20, b[7] == 0x20, b[10] == 0x20, b[19] == 0x20, let m = month(4),
                  let d = b[8] == 0x20 ? number(9, 1) : number(8, 2), let t = clock(11), let y = number(20, 4) {
            (year, mon, day, time) = (y, m, d, t)
        } else {
            return nil
        }
        guard (1...31).contains(day) else { return nil }
        return Double(UTCTimestamp.days(year: year, month: mon, day: day) * 86_400 + time.0 * 3600 + time.1 * 60 + time.2)
    }

    static func packed(_ names: [String]) -> [UInt32] {
        names.map { $0.utf8.reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
    }

    static let days = packed(["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"])
    static let months = packed(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"])
}
