import HTTPCore

/// HAR's startedDateTime (ISO 8601: `2024-01-02T03:04:05.678Z`, or with an offset).
enum ISODate {
    static func seconds(_ text: String) -> Double? {
        let b = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= b.count else { return nil }
            var v = 0
            for c in b[from..<from + count] { guard c >= 0x30 && c <= 0x39 else { return nil }; v = v * 10 + Int(c - 0x30) }
            return v
        }
        guard b.count >= 19, let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var k = 19, fraction = 0.0
        if k < b.count, b[k] == UInt8(ascii: ".") {
            k += 1
            var scale = 0.1
            while k < b.count, b[k] >= 0x30 && b[k] <= 0x39 { fraction += Double(b[k] - 0x30) * scale; scale /= 10; k += 1 }
        }
        var offset = 0
        if k < b.count, b[k] == UInt8(ascii: "+") || b[k] == UInt8(ascii: "-") {
            guard let h = number(k + 1, 2), let m = number(k + 4, 2) else { return nil }
            offset = (h * 60 + m) * 60 * (b[k] == UInt8(ascii: "-") ? -1 : 1)
        }
        return Double(UTCTimestamp.days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offset) + fraction
    }
}
