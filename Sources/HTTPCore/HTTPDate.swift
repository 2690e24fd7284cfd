/// HTTP dates (RFC 9110 §5.6.7).
public enum HTTPDate {
    /// An IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`, the one form a sender may
    /// generate: a date an upstream sent in another form is not passed on.
    public static func isValid(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { v -> Bool in
            guard v.count == 29 else { return false }
            let days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
            let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            func word(_ at: Int, _ list: [String]) -> Bool {
                list.contains { $0.utf8.elementsEqual(v[at..<at + 3]) }
            }
            func number(_ at: Int, _ width: Int, _ range: ClosedRange<Int>) -> Bool {
                var n = 0
                for k in at..<at + width {
                    guard v[k] >= 0x30 && v[k] <= 0x39 else { return false }
                    n = n * 10 + Int(v[k] - 0x30)
                }
                return range.contains(n)
            }
            func literal(_ at: Int, _ text: StaticString) -> Bool {
                UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount).elementsEqual(v[at..<at + text.utf8CodeUnitCount])
            }
            return word(0, days) && literal(3, ", ") && number(5, 2, 1...31) && v[7] == 0x20 && word(8, months) && v[11] == 0x20
                && number(12, 4, 0...9999) && v[16] == 0x20 && number(17, 2, 0...23) && v[19] == 0x3A && number(20, 2, 0...59)
                && v[22] == 0x3A && number(23, 2, 0...60) && literal(25, " GMT")
        }
    }
}
