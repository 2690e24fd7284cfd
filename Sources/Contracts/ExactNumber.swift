/// A JSON number by its exact decimal value (DESIGN §10): `1.0` equals `1`, and
/// `9007199254740993` is not `9007199254740992`. The value is `digits × 10^exponent`, the
/// digits without leading or trailing zeros (none for zero).
public struct ExactNumber: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let negative: Bool
    /// Decimal digits, most significant first, each 0–9.
    public let digits: [UInt8]
    public let exponent: Int

    /// Exponents are clamped here: a lexeme's `e999999999999999999999` still compares in
    /// order, and no arithmetic on it overflows.
    static let exponentLimit = 1 << 40
    public static let multipleDigitLimit = 1_000

    /// The value of a valid JSON number lexeme; nil for anything else.
    public init?(_ lexeme: String) {
        var bytes = Array(lexeme.utf8)[...]
        var negative = false
        if bytes.first == UInt8(ascii: "-") { negative = true; bytes = bytes.dropFirst() }
        var mantissa: [UInt8] = []
        var fraction = 0
        var seenDigit = false, seenDot = false
        while let byte = bytes.first, byte != UInt8(ascii: "e"), byte != UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if byte == UInt8(ascii: ".") {
                if seenDot { return nil }
                seenDot = true
                continue
            }
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            seenDigit = true
            if seenDot { fraction += 1 }
            if !(mantissa.isEmpty && byte == 0x30) { mantissa.append(byte - 0x30) }
        }
        guard seenDigit else { return nil }
        var exponent = 0
        if !bytes.isEmpty {
            bytes = bytes.dropFirst()
            var sign = 1
            if bytes.first == UInt8(ascii: "-") { sign = -1; bytes = bytes.dropFirst() } else if bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
            guard !bytes.isEmpty else { return nil }
            for byte in bytes {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                exponent = min(exponent * 10 + Int(byte - 0x30), Self.exponentLimit)
            }
            exponent *= sign
        }
        self.init(negative: negative, digits: mantissa, exponent: exponent - fraction)
    }

    init(negative: Bool, digits: [UInt8], exponent: Int) {
        var digits = digits[...]
        while digits.first == 0 { digits = digits.dropFirst() }
        var exponent = exponent
        while digits.last == 0 { digits = digits.dropLast(); exponent += 1 }
        self.digits = Array(digits)
        self.negative = negative && !digits.isEmpty
        self.exponent = digits.isEmpty ? 0 : max(-Self.exponentLimit, min(exponent, Self.exponentLimit))
    }

    public var isZero: Bool { digits.isEmpty }
    public var isInteger: Bool { exponent >= 0 }

    public var description: String {
        isZero ? "0" : (negative ? "-" : "") + digits.map { String($0) }.joined() + (exponent == 0 ? "" : "e\(exponent)")
    }

    public static func < (a: ExactNumber, b: ExactNumber) -> Bool {
        if a.negative != b.negative { return a.negative }
        let magnitude = compareMagnitude(a, b)
        return a.negative ? magnitude > 0 : magnitude < 0
    }

    /// -1, 0 or 1 as |a| is below, at or above |b|.
    static func compareMagnitude(_ a: ExactNumber, _ b: ExactNumber) -> Int {
        if a.isZero || b.isZero { return a.isZero ? (b.isZero ? 0 : -1) : 1 }
        // The position of the leading digit decides first.
        let lead = (a.digits.count + a.exponent, b.digits.count + b.exponent)
        if lead.0 != lead.1 { return lead.0 < lead.1 ? -1 : 1 }
        for (x, y) in zip(a.digits, b.digits) where x != y { return x < y ? -1 : 1 }
        return a.digits.count == b.digits.count ? 0 : (a.digits.count < b.digits.count ? -1 : 1)
    }

    /// Whether `self / divisor` is an integer (`divisor` above zero). With the divisor
    /// `D × 10^e` and `D = 2^x 5^y C` (C prime to 10), that is C dividing the dividend's
    /// digits and enough factors of 2 and 5: no work grows with the exponents.
    /// Nil when either number has more than `multipleDigitLimit` significant digits: the
    /// check is quadratic in them, so the validator reports such a value as unchecked.
    public func isMultiple(of divisor: ExactNumber) -> Bool? {
        if isZero { return true }
        guard !divisor.isZero else { return false }
        guard digits.count <= Self.multipleDigitLimit, divisor.digits.count <= Self.multipleDigitLimit else { return nil }
        var (x, y, c) = (0, 0, divisor.digits)
        while let q = Self.divide(c, by: 2) { c = q; x += 1 }
        while let q = Self.divide(c, by: 5) { c = q; y += 1 }
        guard Self.remainder(digits, modulo: c) == 0 else { return false }
        // self / divisor = (A / D) × 10^(ea - eb): the power of ten lends factors of 2 and 5,
        // and A needs the rest of them itself.
        let shift = exponent - divisor.exponent
        return Self.hasFactor(digits, 2, times: x - shift) && Self.hasFactor(digits, 5, times: y - shift)
    }

    /// Whether `p^times` divides `number` (p is 2 or 5).
    static func hasFactor(_ number: [UInt8], _ p: UInt8, times: Int) -> Bool {
        guard times > 0 else { return true }
        // A number of n digits is below 10^n, so below p^(3.33 n) at most.
        guard times <= number.count * 4 else { return false }
        var a = number
        for _ in 0..<times {
            guard let q = divide(a, by: p) else { return false }
            a = q
        }
        return true
    }

    /// `number / d` when `d` divides it exactly, else nil.
    static func divide(_ number: [UInt8], by d: UInt8) -> [UInt8]? {
        var quotient: [UInt8] = []
        quotient.reserveCapacity(number.count)
        var rest = 0
        for digit in number {
            let value = rest * 10 + Int(digit)
            quotient.append(UInt8(value / Int(d)))
            rest = value % Int(d)
        }
        guard rest == 0 else { return nil }
        while quotient.first == 0 { quotient.removeFirst() }
        return quotient
    }

    /// `number mod divisor` is zero or not: 0 when it divides. Long division with the
    /// remainder kept as decimal digits; divisors are schema numbers (their length is a
    /// limit on schemas), the dividend is read once.
    static func remainder(_ number: [UInt8], modulo divisor: [UInt8]) -> Int {
        if divisor == [1] || divisor.isEmpty { return 0 }
        if divisor.count <= 18 {
            let d = divisor.reduce(0) { $0 * 10 + UInt64($1) }
            var rest: UInt64 = 0
            for digit in number { rest = (rest * 10 + UInt64(digit)) % d }
            return rest == 0 ? 0 : 1
        }
        var rest: [UInt8] = []
        for digit in number {
            rest.append(digit)
            while rest.first == 0 { rest.removeFirst() }
            while compareDigits(rest, divisor) >= 0 { rest = subtract(rest, divisor) }
        }
        return rest.isEmpty ? 0 : 1
    }

    static func compareDigits(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.count != b.count { return a.count < b.count ? -1 : 1 }
        for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
        return 0
    }

    /// `a - b` for `a ≥ b`.
    static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = a
        var borrow = 0
        var j = b.count - 1
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            var value = Int(result[i]) - borrow - (j >= 0 ? Int(b[j]) : 0)
            borrow = value < 0 ? 1 : 0
            if value < 0 { value += 10 }
            result[i] = UInt8(value)
            j -= 1
        }
        while result.first == 0 { result.removeFirst() }
        return result
    }
}
