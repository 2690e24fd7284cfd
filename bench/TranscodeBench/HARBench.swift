import Foundation
import Tapes

/// `--har FILE`: what encoding a tape's entries costs (the recording writer's work per
/// exchange), as nanoseconds an entry and MB/s of HAR written, median of 7 rounds of at
/// least 0.3 s each.
enum HARBench {
    static func run(_ path: String) throws {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let entries = try HARCodec.decode(bytes)
        guard !entries.isEmpty else { print("no entries in \(path)"); return }
        let sample = Array(entries.prefix(1000))
        var rounds: [Double] = [], out = 0
        for _ in 0..<7 {
            var n = 0
            let start = DispatchTime.now().uptimeNanoseconds
            var elapsed = 0.0
            repeat {
                for entry in sample { out &+= HARCodec.encode(entry).count }
                n += sample.count
                elapsed = Double(DispatchTime.now().uptimeNanoseconds - start)
            } while elapsed < 3e8
            rounds.append(elapsed / Double(n))
        }
        rounds.sort()
        let size = sample.reduce(0) { $0 + HARCodec.encode($1).count } / sample.count
        print(String(format: "HAR encode: %.0f ns an entry (%.0f–%.0f), %d bytes an entry, %.0f MB/s  [%d]",
                     rounds[3], rounds[0], rounds[6], size, Double(size) / rounds[3] * 1e3, out & 1))
    }
}
