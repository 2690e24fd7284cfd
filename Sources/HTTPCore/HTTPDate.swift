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

    static func packed(_ names: [String]) -> [UInt32] {
        names.map { $0.utf8.reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
    }

    static let days = packed(["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"])
    static let months = packed(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"])
}
