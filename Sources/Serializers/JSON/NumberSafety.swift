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

    /// The significant digits of a lexeme as one integer with its power of ten, read
    /// without allocating: `m` × 10^`q`, `k` digits (no trailing zeros); `k` is 18 for
    /// "more than 17" (m is then unused). Zero has k 0.
    static func significand(_ p: UnsafeBufferPointer<UInt8>) -> (m: UInt64, k: Int, q: Int) {
        var i = p.first == UInt8(ascii: "-") ? 1 : 0
        var m: UInt64 = 0
        var taken = 0            // digits in m (the first 17 significant ones)
        var lastNonzero = -1     // index among significant digits
        var significant = 0      // significant digits seen
        var integerDigits = 0    // significant digits before the point
        var leadingFractionZeros = 0
        var inFraction = false
        while i < p.count {
            let c = p[i]
            if c == UInt8(ascii: ".") { inFraction = true; i += 1; continue }
            guard c &- 0x30 < 10 else { break }
            if significant == 0 && c == UInt8(ascii: "0") {
                if inFraction { leadingFractionZeros += 1 }
            } else {
                if c != UInt8(ascii: "0") { lastNonzero = significant }
                if taken < 17 { m = m &* 10 &+ UInt64(c - 0x30); taken += 1 }
                significant += 1
                if !inFraction { integerDigits += 1 }
            }
            i += 1
        }
        guard lastNonzero >= 0 else { return (0, 0, 0) }
        if lastNonzero >= 17 { return (0, 18, 0) }
        var exponent = 0
        if i < p.count {   // the exponent: saturated far past any double's range
            i += 1
            var negative = false
            if p[i] == UInt8(ascii: "-") || p[i] == UInt8(ascii: "+") { negative = p[i] == UInt8(ascii: "-"); i += 1 }
            while i < p.count {
                if exponent < 1_000_000 { exponent = exponent * 10 + Int(p[i] - 0x30) }
                i += 1
            }
            if negative { exponent = -exponent }
        }
        let k = lastNonzero + 1
        for _ in k..<taken { m /= 10 }
        // value = 0.d1…dk × 10^position
        let position = integerDigits > 0 ? integerDigits : -leadingFractionZeros
        return (m, k, position - k + exponent)
    }

    static let powersOfTen: [UInt128] = (0...38).map { n in (0..<n).reduce(UInt128(1)) { r, _ in r * 10 } }
    /// 10^0 … 10^22, each exact in a double.
    static let doublePowersOfTen: [Double] = (0...22).map { n in (0..<n).reduce(1.0) { r, _ in r * 10 } }

    /// UInt64 → UInt128 without the generic conversion (unspecialized across modules, it
    /// cost more than the whole check).
    @inline(__always) static func wide(_ x: UInt64) -> UInt128 { UInt128(_low: x, _high: 0) }

    /// The decision for 16 and 17 digits in exact 128-bit arithmetic, where the magnitudes
    /// fit (most numbers that reach here): the shortest form of a double is the decimal
    /// with the fewest digits in its rounding interval, the closest to it among those
    /// (Steele and White, Ryu). `m` × 10^`q` is that form exactly when neither of its
    /// (k−1)-digit neighbours is in the interval and its k-digit neighbour on the double's
    /// side is not closer. Anything out of range, or a tie, is left to printing.
    public static func exactCheck(_ p: UnsafeBufferPointer<UInt8>) -> Verdict {
        let (m, k, q) = significand(p)
        if k == 0 { return .safe }
        if k > 17 { return .unsafe }
        // Fewer than 16 digits: safe wherever doubles are normal (see isSafeByPrinting).
        if k <= 15 { return (-290...290).contains(q + k) ? .safe : .undecided }
        // Scaled so every quantity is an integer: a decimal x (in units of 10^q) becomes
        // x·xScale, the double d becomes dScaled, its half-gaps up and down `up`, `down`.
        let xScale: UInt128, dScaled: UInt128, up: UInt128, down: UInt128, even: Bool
        let one: UInt128 = 1
        if q >= 0 {
            guard q <= 20 else { return .undecided }
            let (value, overflow) = wide(m).multipliedReportingOverflow(by: powersOfTen[q])
            guard !overflow, value < one << 124 else { return .undecided }
            if value <= one << 53 { return .safe }   // an integer a double holds exactly
            let shift = (128 - value.leadingZeroBitCount) - 53
            var mantissa = value >> shift
            let rest = value & ((one << shift) - 1), half = one << (shift - 1)
            if rest > half || (rest == half && mantissa & 1 == 1) { mantissa += 1 }
            var e = shift
            if mantissa == one << 53 { mantissa >>= 1; e += 1 }
            even = mantissa & 1 == 0
            xScale = powersOfTen[q] << 2
            dScaled = mantissa << (e + 2)
            up = one << (e + 1)
            down = mantissa == one << 52 ? one << e : up
        } else {
            let t = -q
            guard t <= 21 else { return .undecided }
            let scale = powersOfTen[t]
            // d = M·2^-e with M in [2^52, 2^53): e from a double estimate, M by exact
            // multiplication (no 128-bit division), rounded half to even.
            let estimate = Double(m) / doublePowersOfTen[t]
            guard estimate.isNormal else { return .undecided }
            var e = 52 - Int(estimate.exponent)
            var mantissa: UInt128 = 0
            for _ in 0..<3 {
                guard e >= -60, e <= 66 else { return .undecided }
                // M = round(m·2^e / 10^t); a negative e divides by 2^-e instead.
                let numerator = wide(m) << max(0, e), divisor = scale << max(0, -e)
                var guess = wide(UInt64((estimate * Double(sign: .plus, exponent: e, significand: 1)).rounded(.down)))
                var product = guess * divisor
                while product > numerator { guess -= 1; product -= divisor }
                while numerator - product >= divisor { guess += 1; product += divisor }
                // Out of [2^52, 2^53) before rounding: the estimate's exponent was off by one.
                if guess >= one << 53 { e -= 1; continue }
                if guess < one << 52 { e += 1; continue }
                let rest2 = (numerator - product) << 1
                if rest2 > divisor || (rest2 == divisor && guess & 1 == 1) { guess += 1 }
                if guess == one << 53 { guess = one << 52; e -= 1 }
                mantissa = guess
                break
            }
            guard mantissa != 0, e >= -60 else { return .undecided }
            // Scaled by 4·10^t·2^max(e, 0): d = M·2^-e exactly, half-gaps 2^(-e-1) (2^(-e-2)
            // below a power of two).
            let exponent = max(0, -e)
            even = mantissa & 1 == 0
            xScale = one << (max(0, e) + 2)
            dScaled = mantissa * scale << (exponent + 2)
            up = scale << (exponent + 1)
            down = mantissa == one << 52 ? scale << exponent : up
        }
        func inInterval(_ x: UInt128) -> Bool {
            let low = dScaled - down, high = dScaled + up
            return (x > low || (even && x == low)) && (x < high || (even && x == high))
        }
        let s = wide(m) * xScale
        let shorterBelow = wide(m / 10 * 10) * xScale, shorterAbove = shorterBelow + 10 * xScale
        if inInterval(shorterBelow) || inInterval(shorterAbove) { return .unsafe }
        if s == dScaled { return .safe }
        let neighbour = s < dScaled ? s + xScale : s - xScale
        guard inInterval(neighbour) else { return .safe }
        let distance = s < dScaled ? dScaled - s : s - dScaled
        let other = neighbour < dScaled ? dScaled - neighbour : neighbour - dScaled
        if other < distance { return .unsafe }
        return other == distance ? .undecided : .safe
    }
}
