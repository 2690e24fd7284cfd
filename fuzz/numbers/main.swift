// libFuzzer target for NumberSafety (Sources/Serializers/JSON), built by fuzz/run.sh. Any
// input that is one JSON number is classified, and checked against an oracle that shares
// none of its shortcuts: Foundation's Decimal compares the lexeme with the shortest form
// of its double (where Decimal can hold both: 38 digits, exponents within ±120).
@testable import Serializers
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = UnsafeBufferPointer(start: data, count: size)
    guard size > 0, size < 64, case .number(let lexeme)? = try? JSONValue.parse(Array(input), options: JSONReadOptions(allowFragments: true))
    else { return 0 }
    let safe = lexeme.utf8.withContiguousStorageIfAvailable { NumberSafety.isSafe($0) } ?? false
    let stringified = NumberGuard.stringified(Array(lexeme.utf8))
    precondition(stringified == Array((safe ? lexeme : "\"" + lexeme + "\"").utf8), "stringified disagrees with isSafe")
    guard let double = Double(lexeme) else { return 0 }
    guard double.isFinite else {
        precondition(!safe, "\(lexeme) overflows a double but was called safe")
        return 0
    }
    // Decimal holds 38 digits: a longer lexeme would be rounded before the comparison.
    guard lexeme.utf8.filter({ $0 &- 0x30 < 10 }).count <= 34,
          let source = Decimal(string: lexeme, locale: Locale(identifier: "en_US_POSIX")),
          let shortest = Decimal(string: double.description, locale: Locale(identifier: "en_US_POSIX")),
          !source.isNaN, !shortest.isNaN, abs(source.exponent) < 100, abs(shortest.exponent) < 100,
          source.significand.description.count <= 36 else { return 0 }
    let oracle = source == shortest
    precondition(safe == oracle, "\(lexeme): isSafe \(safe), the oracle \(oracle) (shortest \(double.description))")
    return 0
}
