import Foundation
import Serializers

/// `--worst-cases [SIZE]`: the bounded-work contract measured (DESIGN §5). For every
/// response and request serializer, the input shapes that cost the most per byte —
/// tiny values, deep nesting at the limit, escapes, regrouped siblings, shared plist
/// references — generated at SIZE bytes (default 8 MiB) and run the way a route runs
/// them. Reported per case: time per input byte (median of 3, after a warm-up) against
/// 20 ns/B + 1 ms, and peak working memory over the input (a fresh child process:
/// VmHWM after one run minus RSS before it) against 8× + 1 MiB.
struct WorstCase {
    enum Side { case response(ResponseSettings, contentType: String), request(String, contentType: String, method: String) }
    let name: String
    let side: Side
    let make: (Int) -> [UInt8]

    enum Outcome { case success(Int), failure(String) }

    /// Output bytes, or the failure's detail.
    func run(_ input: [UInt8]) -> Outcome {
        switch side {
        case .response(let settings, let contentType):
            guard let serializer = try? ResponseSerializerRegistry.make(settings) else { return .failure("bad settings") }
            let result = serializer.serialize(UpstreamResponse(status: 200, contentType: contentType, body: input))
            if let value = result.value, result.error == nil { return .success(value.bytes.count) }
            return .failure(result.error.map { "\($0)" } ?? "no value")
        case .request(let name, let contentType, let method):
            guard let serializer = try? RequestSerializerRegistry.make(name) else { return .failure("bad serializer") }
            do throws(RequestSerializationError) {
                let out = try serializer.serialize(RequestInput(method: method, query: nil, contentType: contentType, body: input,
                                                                maxOutput: 4 * input.count))
                return .success(out.body.count + (out.query?.utf8.count ?? 0))
            } catch {
                return .failure(error.description)
            }
        }
    }
}

enum WorstCases {
    static func repeated(_ unit: String, to size: Int, prefix: String = "", suffix: String = "", separator: String = "") -> [UInt8] {
        var out = Array(prefix.utf8)
        let u = Array(unit.utf8), s = Array(separator.utf8), tail = Array(suffix.utf8)
        var first = true
        while out.count + u.count + s.count + tail.count <= size {
            if !first { out += s }
            out += u
            first = false
        }
        return out + tail
    }

    static func response(_ serializer: SerializerName, _ contentType: String, _ configure: (inout ResponseSettings) -> Void = { _ in }) -> WorstCase.Side {
        var settings = ResponseSettings(serializer: serializer)
        settings.acceptableContentTypes = .any
        configure(&settings)
        return .response(settings, contentType: contentType)
    }

    static let deep = 500  // under the default max_json_depth of 512

    static var all: [WorstCase] { [
        WorstCase(name: "json: [0,0,…]", side: response(.json, "application/json")) { repeated("0", to: $0, prefix: "[", suffix: "]", separator: ",") },
        WorstCase(name: "json: 500 deep, then [0,0,…]", side: response(.json, "application/json")) {
            repeated("0", to: $0 - 2 * deep, prefix: String(repeating: "[", count: deep), suffix: String(repeating: "]", count: deep), separator: ",")
        },
        WorstCase(name: "json: [[],[],…] 500 deep", side: response(.json, "application/json")) {
            repeated("[]", to: $0 - 2 * deep, prefix: String(repeating: "[", count: deep), suffix: String(repeating: "]", count: deep), separator: ",")
        },
        WorstCase(name: "json: \"\\u0001…\" escapes", side: response(.json, "application/json")) { repeated("\\u0001", to: $0, prefix: "[\"", suffix: "\"]") },
        WorstCase(name: "json: {\"k\":null,…} null removal", side: response(.json, "application/json") { $0.removeNullValues = true }) {
            repeated("\"k\":null", to: $0, prefix: "{", suffix: "}", separator: ",")
        },
        WorstCase(name: "xml: <a/><a/>…", side: response(.xml, "application/xml")) { repeated("<a/>", to: $0, prefix: "<r>", suffix: "</r>") },
        WorstCase(name: "xml: <a/><b/>… regrouped", side: response(.xml, "application/xml")) { repeated("<a/><b/>", to: $0, prefix: "<r>", suffix: "</r>") },
        // libxml2 refuses nesting past 256 itself.
        WorstCase(name: "xml: 250 deep, repeated", side: response(.xml, "application/xml")) {
            repeated(String(repeating: "<a>", count: 250) + String(repeating: "</a>", count: 250), to: $0, prefix: "<r>", suffix: "</r>")
        },
        WorstCase(name: "xml: 256 attributes per element", side: response(.xml, "application/xml")) {
            repeated("<e " + (0..<256).map { "a\($0)=\"\"" }.joined(separator: " ") + "/>", to: $0, prefix: "<r>", suffix: "</r>")
        },
        WorstCase(name: "xml: &lt;&lt;… entities", side: response(.xml, "application/xml")) { repeated("&lt;", to: $0, prefix: "<r>", suffix: "</r>") },
        WorstCase(name: "xml: distinct names <n1/><n2/>…", side: response(.xml, "application/xml")) {
            var out = Array("<r>".utf8), k = 0
            while out.count < $0 - 20 { out += Array("<n\(k)/>".utf8); k += 1 }
            return out + Array("</r>".utf8)
        },
        WorstCase(name: "plist xml: <integer>0</integer>…", side: response(.plist, "application/x-plist")) {
            repeated("<integer>0</integer>", to: $0, prefix: "<plist><array>", suffix: "</array></plist>")
        },
        WorstCase(name: "plist xml: <key/><true/>…", side: response(.plist, "application/x-plist")) {
            repeated("<key>k</key><true/>", to: $0, prefix: "<plist><dict>", suffix: "</dict></plist>")
        },
        WorstCase(name: "bplist: distinct integers", side: response(.plist, "application/x-plist")) { BinaryPlist.integers(size: $0) },
        WorstCase(name: "bplist: one 1 KiB string referenced ×n", side: response(.plist, "application/x-plist")) { BinaryPlist.sharedString(size: $0) },
        WorstCase(name: "bplist: reference DAG (2^40 nodes)", side: response(.plist, "application/x-plist")) { _ in BinaryPlist.dag(levels: 40) },
        WorstCase(name: "form: k1&k2&… distinct keys", side: response(.form, "application/x-www-form-urlencoded")) {
            var out: [UInt8] = [], k = 0
            while out.count < $0 - 12 { out += Array("k\(k)&".utf8); k += 1 }
            return out
        },
        WorstCase(name: "form: a[]=&a[]=…", side: response(.form, "application/x-www-form-urlencoded")) { repeated("a[]=", to: $0, separator: "&") },
        WorstCase(name: "form: 500-deep keys, repeated", side: response(.form, "application/x-www-form-urlencoded")) {
            var out: [UInt8] = [], k = 0
            let stem = "a" + String(repeating: "[b]", count: deep - 2)
            while out.count < $0 - 3 * deep { out += Array("\(stem)[c\(k)]=&".utf8); k += 1 }
            return out
        },
        WorstCase(name: "form: a=%01%01… escapes", side: response(.form, "application/x-www-form-urlencoded")) { repeated("%01", to: $0, prefix: "a=") },
        WorstCase(name: "text: NUL bytes (6× as JSON)", side: response(.text, "text/plain")) { [UInt8](repeating: 0, count: $0) },
        WorstCase(name: "raw: non-UTF-8 (base64)", side: response(.raw, "application/octet-stream")) { [UInt8](repeating: 0xFF, count: $0) },
        WorstCase(name: "image: include_data", side: response(.image, "image/png") { $0.image = ImageOptions(includeData: true) }) { size in
            var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
            png += [0, 0, 1, 0, 0, 0, 1, 0, 8, 6, 0, 0, 0, 0, 0, 0, 0]
            return png + [UInt8](repeating: 0, count: max(0, size - png.count))
        },
        WorstCase(name: "compound json,xml,plist,form: XML body", side: response(.compound, "application/xml") { $0.serializers = [.json, .xml, .plist, .form] }) {
            repeated("<a/><b/>", to: $0, prefix: "<r>", suffix: "</r>")
        },
        WorstCase(name: "request http (POST): [[],[],…] 500 deep", side: .request("http", contentType: "application/json", method: "POST")) {
            repeated("[]", to: $0 - 2 * deep, prefix: "{\"a\":" + String(repeating: "[", count: deep - 1), suffix: String(repeating: "]", count: deep - 1) + "}", separator: ",")
        },
        WorstCase(name: "request http (GET): 500 deep, then 0,0,…", side: .request("http", contentType: "application/json", method: "GET")) {
            repeated("0", to: $0 - 2 * deep, prefix: "{\"a\":" + String(repeating: "[", count: deep - 1), suffix: String(repeating: "]", count: deep - 1) + "}", separator: ",")
        },
        WorstCase(name: "request plist: 500 deep, then 0,0,…", side: .request("plist", contentType: "application/json", method: "POST")) {
            repeated("0", to: $0 - 2 * deep, prefix: "{\"a\":" + String(repeating: "[", count: deep - 1), suffix: String(repeating: "]", count: deep - 1) + "}", separator: ",")
        },
        WorstCase(name: "request json: {\"a\":[0,0,…]}", side: .request("json", contentType: "application/json", method: "POST")) {
            repeated("0", to: $0, prefix: "{\"a\":[", suffix: "]}", separator: ",")
        },
        WorstCase(name: "request json: form a[]=&a[]=…", side: .request("json", contentType: "application/x-www-form-urlencoded", method: "POST")) {
            repeated("a[]=", to: $0, separator: "&")
        },
        WorstCase(name: "request json: bplist reference DAG", side: .request("json", contentType: "application/x-plist", method: "POST")) { _ in
            BinaryPlist.dag(levels: 40)
        },
    ] }

    /// The daemon's allocator settings (Proxy's MallocTuning): blocks from 4 MiB are
    /// mmapped, so buffers that grow by `realloc` move by remapping.
    static func tuneMallocLikeTheDaemon() {
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        _ = mallopt(-1, 32 << 20)   // M_TRIM_THRESHOLD
        _ = mallopt(-3, 4 << 20)    // M_MMAP_THRESHOLD
    }

    static func probe(index: Int, size: Int) {
        tuneMallocLikeTheDaemon()
        let c = all[index]
        let input = c.make(size)
        _ = c.run(input)
        trimHeap()
        let before = ProcStatus.kilobytes("VmRSS")
        ProcStatus.resetPeak()
        _ = c.run(input)
        let peak = ProcStatus.kilobytes("VmHWM")
        print(Double(peak - before) * 1024)
    }

    static func peakBytes(index: Int, size: Int) -> Double? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--worst-probe", String(index), String(size)]
        let pipe = Pipe()
        process.standardOutput = pipe
        guard (try? process.run()) != nil else { return nil }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return Double(output.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    static func run(size: Int, only: String?) -> Bool {
        tuneMallocLikeTheDaemon()
        var rows = ["| case | input bytes | result | ns per input byte (min–max) | time / target | peak working memory / input | memory / target |",
                    "|---|---|---|---|---|---|---|"]
        var allMet = true
        for (index, c) in all.enumerated() where only == nil || c.name.contains(only!) {
            let input = c.make(size)
            let outcome = c.run(input)
            var times: [Double] = []
            for _ in 0..<3 {
                let t0 = now()
                _ = c.run(input)
                times.append(now() - t0)
            }
            let n = Double(input.count)
            let timeTarget = 20e-9 * n + 1e-3
            let peak = peakBytes(index: index, size: size) ?? .nan
            let memoryTarget = 8 * n + 1_048_576
            let result: String
            switch outcome {
            case .success(let bytes): result = "\(bytes) bytes out"
            case .failure(let detail): result = "refused: " + String(detail.prefix(90))
            }
            let t = median(times)
            allMet = allMet && t <= timeTarget && peak <= memoryTarget
            let row = String(format: "| %@ | %d | %@ | %.1f (%.1f–%.1f) | %.2f | %.2f× | %.2f |", c.name, input.count, result,
                             t / n * 1e9, times.min()! / n * 1e9, times.max()! / n * 1e9, t / timeTarget,
                             peak / n, peak / memoryTarget)
            rows.append(row)
            print(row)
        }
        print("\n" + rows.joined(separator: "\n"))
        print(allMet ? "\nevery case within its time and memory bound" : "\nSOME CASES EXCEED THEIR BOUND (a ratio above 1.00)")
        return allMet
    }
}

/// Minimal `bplist00` writer for the generated cases: 1-byte offsets are not enough, so
/// offsets are 4 bytes and references 4 bytes.
enum BinaryPlist {
    static func build(objects: [[UInt8]], top: Int) -> [UInt8] {
        var out = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects { offsets.append(out.count); out += object }
        let table = out.count
        for offset in offsets { out += be(offset, 4) }
        out += [0, 0, 0, 0, 0, 0, 4, 4] + be(objects.count, 8) + be(top, 8) + be(table, 8)
        return out
    }

    static func be(_ v: Int, _ size: Int) -> [UInt8] { (0..<size).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    static func count(_ marker: UInt8, _ n: Int) -> [UInt8] {
        n < 15 ? [marker | UInt8(n)] : [marker | 0x0F, 0x13] + be(n, 8)
    }

    /// An array of n distinct 8-byte integers.
    static func integers(size: Int) -> [UInt8] {
        let n = max(1, (size - 64) / 16)
        var objects: [[UInt8]] = [count(0xA0, n) + (1...n).flatMap { be($0, 4) }]
        for k in 0..<n { objects.append([0x13] + be(k, 8)) }
        return build(objects: objects, top: 0)
    }

    /// An array referencing one 1 KiB string n times: the JSON repeats it n times.
    static func sharedString(size: Int) -> [UInt8] {
        let n = max(1, (size - 1200) / 4)
        return build(objects: [count(0xA0, n) + [UInt8](repeating: 0, count: 0) + (0..<n).flatMap { _ in be(1, 4) },
                               count(0x50, 1024) + [UInt8](repeating: UInt8(ascii: "x"), count: 1024)], top: 0)
    }

    /// Object i is an array referencing object i+1 twice: 2^levels leaves.
    static func dag(levels: Int) -> [UInt8] {
        var objects: [[UInt8]] = []
        for i in 0..<levels { objects.append(count(0xA0, 2) + be(i + 1, 4) + be(i + 1, 4)) }
        objects.append([0x09])
        return build(objects: objects, top: 0)
    }
}
