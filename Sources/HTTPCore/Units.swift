/// Durations (`250ms`, `10s`, `2m`, `1h`) and sizes (`512KiB`, `32MiB`, `1GiB`, `10MB`,
/// or plain bytes) as the config writes them.
public enum Units {
    public static func seconds(_ text: String) -> Double? {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            let number = text.dropLast(suffix.count)
            guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
                  let value = Double(number), value.isFinite else { return nil }
            return value * scale
        }
        return nil
    }

    public static func bytes(_ text: String) -> Int? {
        let units: [(String, Int)] = [("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30),
                                      ("KB", 1_000), ("MB", 1_000_000), ("GB", 1_000_000_000), ("B", 1)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            guard let value = Int(text.dropLast(suffix.count)), value >= 0 else { return nil }
            let (product, overflow) = value.multipliedReportingOverflow(by: scale)
            return overflow ? nil : product
        }
        return Int(text).flatMap { $0 >= 0 ? $0 : nil }
    }
}
