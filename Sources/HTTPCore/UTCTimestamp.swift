/// `YYYY-MM-DDTHH:MM:SS[.fff]Z` (RFC 3339, UTC) from seconds since the Unix epoch,
/// computed without the C library so dates far from today format too.
public enum UTCTimestamp {
    public enum Fraction: Sendable {
        /// Always three digits, truncated (log lines).
        case milliseconds
        /// Rounded to milliseconds, trailing zeros dropped, none when whole (plist dates).
        case trimmedMilliseconds
    }

    public static func format(unixSeconds: Double, fraction: Fraction) -> String {
        let scaled = unixSeconds * 1000
        let total = Int64(fraction == .milliseconds ? scaled.rounded(.down) : scaled.rounded())
        let (days, msOfDay) = floorDivision(total, 86_400_000)
        let (y, m, d) = civil(fromDays: Int(days))
        let seconds = Int(msOfDay / 1000), millis = Int(msOfDay % 1000)
        var text = "\(padded(y, 4))-\(padded(m, 2))-\(padded(d, 2))T"
            + "\(padded(seconds / 3600, 2)):\(padded(seconds / 60 % 60, 2)):\(padded(seconds % 60, 2))"
        switch fraction {
        case .milliseconds:
            text += "." + padded(millis, 3)
        case .trimmedMilliseconds where millis > 0:
            var digits = padded(millis, 3)
            while digits.last == "0" { digits.removeLast() }
            text += "." + digits
        case .trimmedMilliseconds:
            break
        }
        return text + "Z"
    }

    /// The `.milliseconds` form written at `out` (24 bytes), for years 0–9999; nil (and
    /// nothing written) for others.
    public static func putMilliseconds(unixSeconds: Double, into out: UnsafeMutablePointer<UInt8>) -> Int? {
        let (days, msOfDay) = floorDivision(Int64((unixSeconds * 1000).rounded(.down)), 86_400_000)
        let (y, m, d) = civil(fromDays: Int(days))
        guard (0...9999).contains(y) else { return nil }
        let seconds = Int(msOfDay / 1000), millis = Int(msOfDay % 1000)
        func put(_ value: Int, _ width: Int, at start: Int) {
            var v = value
            for k in stride(from: start + width - 1, through: start, by: -1) { out[k] = UInt8(ascii: "0") + UInt8(v % 10); v /= 10 }
        }
        put(y, 4, at: 0); out[4] = UInt8(ascii: "-"); put(m, 2, at: 5); out[7] = UInt8(ascii: "-"); put(d, 2, at: 8)
        out[10] = UInt8(ascii: "T"); put(seconds / 3600, 2, at: 11); out[13] = UInt8(ascii: ":"); put(seconds / 60 % 60, 2, at: 14)
        out[16] = UInt8(ascii: ":"); put(seconds % 60, 2, at: 17); out[19] = UInt8(ascii: "."); put(millis, 3, at: 20)
        out[23] = UInt8(ascii: "Z")
        return 24
    }

    public static func padded(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    static func floorDivision(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let q = a / b, r = a % b
        return r < 0 ? (q - 1, r + b) : (q, r)
    }

    /// Days since 1970-01-01 of a civil date (Howard Hinnant's days-from-civil).
    public static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Howard Hinnant's days-from-civil inverse.
    static func civil(fromDays z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
