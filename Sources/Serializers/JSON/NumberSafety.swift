internal import CVector
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether a JSON number survives a double (DESIGN §5, `output.numbers`): *safe* when the
/// shortest round-trip form of its nearest IEEE 754 double (what RFC 8785, JavaScript and
/// most mobile parsers print) has the same mathematical value as the source text.
/// `1.10`, `0.1`, `1e23`, `-0` are safe; `9007199254740993`, `12345678901234567890`, `1e400`
/// are not.
public enum NumberSafety {
    /// A lexeme's value as significant digits (no leading or trailing zeros) times a power
    /// of ten: `-120.50` → digits `1205`, exponent `-1`. Zero has no digits.
    struct Decimal: Equatable {
        var digits: [UInt8] = []
        var exponent = 0
    }

    /// 1 when the number just written at `out[start...]` is unsafe, else 0: for writers that
    /// count as they go (the property-list readers), so `output.numbers` need not scan.
    static func unsafeCount(_ out: [UInt8], from start: Int) -> Int {
        out.withUnsafeBufferPointer { isSafe(UnsafeBufferPointer(rebasing: $0[start...])) ? 0 : 1 }
    }

    /// `lexeme` is a valid JSON number (the serializers' output guarantees it).
    public static func isSafe(_ lexeme: UnsafeBufferPointer<UInt8>) -> Bool {
        if isSafeByShape(lexeme) { return true }
        switch exactCheck(lexeme) {
        case .safe: return true
        case .unsafe: return false
        case .undecided: return isSafeByPrinting(lexeme)
        }
    }

    /// The reference decision: the lexeme against Swift's shortest print of strtod's double.
    static func isSafeByPrinting(_ lexeme: UnsafeBufferPointer<UInt8>) -> Bool {
        let value = decimal(lexeme)
        let k = value.digits.count
        if k == 0 { return true }                              // zero, whatever its form
        let magnitude = value.exponent + k                     // value < 10^magnitude
        if k <= 15 && (-290...290).contains(magnitude) { return true }
        if k > 17 || magnitude > 310 || magnitude < -325 { return false }
        // The double itself: strtod rounds correctly; Swift prints the shortest form.
        var text = Array(lexeme)
        text.append(0)
        let double = text.withUnsafeBufferPointer { p in p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: p.count) { strtod($0, nil) } }
        guard double.isFinite, double != 0 else { return false }
        let shortest = Array(double.magnitude.description.utf8)
        return shortest.withUnsafeBufferPointer { decimal($0) } == value
    }

    /// The common forms decided from their length alone: an optional minus, then at most
    /// 15 digits with at most one decimal point, no exponent — every such value is below
    /// 2^53 in digits, so the nearest double prints back as the same digits.
    @inline(__always)
    public static func isSafeByShape(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = p.count
        guard n <= 17 else { return false }
        var digits = 0
        for c in p {
            if c &- 0x30 < 10 { digits += 1 } else if c != UInt8(ascii: "-") && c != UInt8(ascii: ".") { return false }
        }
        return digits <= 15
    }

    /// Significant digits and power of ten of a number's text (JSON's grammar, or Swift's
    /// `description` of a finite double: `1e-320`, `1.2e+20`, `123.5`).
    static func decimal(_ p: UnsafeBufferPointer<UInt8>) -> Decimal {
        var i = 0
        if i < p.count && (p[i] == UInt8(ascii: "-") || p[i] == UInt8(ascii: "+")) { i += 1 }
        var digits: [UInt8] = []
        var pointShift = 0
        var seenPoint = false
        while i < p.count {
            let c = p[i]
            if c == UInt8(ascii: ".") {
                seenPoint = true
            } else if c &- 0x30 < 10 {
                if !(digits.isEmpty && c == UInt8(ascii: "0")) { digits.append(c) } else if seenPoint { pointShift -= 1; i += 1; continue }
                if seenPoint { pointShift -= 1 }
            } else {
                break
            }
            i += 1
        }
        var exponent = 0
        if i < p.count && (p[i] | 0x20) == UInt8(ascii: "e") {
            i += 1
            var negative = false
            if i < p.count && (p[i] == UInt8(ascii: "-") || p[i] == UInt8(ascii: "+")) {
                negative = p[i] == UInt8(ascii: "-")
                i += 1
            }
            // Saturates far beyond any double's range: 10^±(10^9) decides the same way.
            while i < p.count, p[i] &- 0x30 < 10 {
                if exponent < 1_000_000_000 { exponent = exponent * 10 + Int(p[i] - 0x30) }
                i += 1
            }
            if negative { exponent = -exponent }
        }
        var trailing = 0
        while let last = digits.last, last == UInt8(ascii: "0") { digits.removeLast(); trailing += 1 }
        if digits.isEmpty { return Decimal() }
        return Decimal(digits: digits, exponent: exponent + pointShift + trailing)
    }

    public enum Verdict: Sendable { case safe, unsafe, undecided }

    /// The exact check (`json_fast.c`'s `sj_number_verdict`, the one the JSON walk runs):
    /// up to 15 significant digits safe, over 17 unsafe, 16 and 17 decided in 128-bit
    /// integers; `undecided` for ties and magnitudes past its range, which printing decides.
    public static func exactCheck(_ p: UnsafeBufferPointer<UInt8>) -> Verdict {
        guard let base = p.baseAddress, !p.isEmpty else { return .undecided }
        switch serializerd_number_verdict(base, p.count) {
        case 0: return .safe
        case 1: return .unsafe
        default: return .undecided
        }
    }
}
