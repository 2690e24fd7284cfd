import HTTPCore
import Synchronization

/// The text exposition format, written straight into bytes (no String per sample).
struct PrometheusText {
    var bytes: [UInt8] = []

    /// `le="…"` for every bucket bound, rendered once.
    static let bucketLabels: [[UInt8]] = LatencyBuckets.bounds.map { Array("le=\"\(NumberText.shortest($0))\"".utf8) } + [Array("le=\"+Inf\"".utf8)]

    init() { bytes.reserveCapacity(256 << 10) }

    mutating func family(_ name: String, _ type: String, _ help: String) {
        append("# HELP \(name) \(help)\n# TYPE \(name) \(type)\n")
    }

    mutating func sample(_ name: String, _ labels: [(String, String)], _ value: UInt64) {
        append(name)
        appendLabels(labels)
        bytes.append(0x20)
        appendInteger(value)
        bytes.append(0x0A)
    }

    mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Double) {
        append(name)
        appendLabels(labels)
        bytes.append(0x20)
        append(NumberText.shortest(value))
        bytes.append(0x0A)
    }

    mutating func histogram(_ name: String, _ labels: [(String, String)], _ h: HistogramSnapshot) {
        // `name_bucket{labels,` once; each line adds its `le` and count.
        var prefix = Array((name + "_bucket{").utf8)
        var labelText = PrometheusText()
        labelText.bytes = []
        labelText.appendLabelList(labels)
        prefix += labelText.bytes
        if !labels.isEmpty { prefix.append(UInt8(ascii: ",")) }
        var cumulative: UInt64 = 0
        for (index, le) in Self.bucketLabels.enumerated() {
            cumulative &+= h.buckets[index]
            bytes += prefix
            bytes += le
            bytes.append(contentsOf: [UInt8(ascii: "}"), 0x20])
            appendInteger(cumulative)
            bytes.append(0x0A)
        }
        sample(name + "_sum", labels, h.sum)
        sample(name + "_count", labels, h.count)
    }

    mutating func appendLabels(_ labels: [(String, String)]) {
        guard !labels.isEmpty else { return }
        bytes.append(UInt8(ascii: "{"))
        appendLabelList(labels)
        bytes.append(UInt8(ascii: "}"))
    }

    /// `a="x",b="y"` with values escaped as the format requires.
    mutating func appendLabelList(_ labels: [(String, String)]) {
        for (index, (name, value)) in labels.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            append(name)
            bytes.append(contentsOf: [UInt8(ascii: "="), UInt8(ascii: "\"")])
            for byte in value.utf8 {
                switch byte {
                case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                default: bytes.append(byte)
                }
            }
            bytes.append(UInt8(ascii: "\""))
        }
    }

    /// Small strings live inline, so this allocates nothing.
    mutating func appendInteger(_ value: UInt64) {
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func append(_ text: String) { bytes.append(contentsOf: text.utf8) }
}
