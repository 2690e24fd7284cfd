// Transcode throughput: serializerd's serializers against Foundation on the same bytes,
// in the same run. Each cell is the median of `--reps` rounds; each round is the median
// per-iteration time of ≥ 5 iterations and ≥ 0.5 s after a warm-up. Peak memory is
// measured in a fresh child process per payload (VmHWM after one transcode, minus the
// RSS before it, over the input size).
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Serializers
import CLibxml2

struct Options {
    var dataDirectory = "../shared/bench-data"
    var outputDirectory: String?
    var reps = 3
    var minSeconds = 0.5
    var only: String?
    /// One payload of your own instead of the standard set (format from the extension).
    var file: String?
    /// bench/simdjson/minify.cpp built: the JSON rows get simdjson's minifier as a column.
    var simdjson: String?
    /// bench/reference/xml_floor.c built: its line is printed under the table.
    var xmlFloor: String?
}

func parseArguments() -> Options {
    var options = Options()
    var args = CommandLine.arguments.dropFirst()
    while let arg = args.popFirst() {
        switch arg {
        case "--data": options.dataDirectory = args.popFirst() ?? options.dataDirectory
        case "--out": options.outputDirectory = args.popFirst()
        case "--reps": options.reps = Int(args.popFirst() ?? "") ?? options.reps
        case "--min-seconds": options.minSeconds = Double(args.popFirst() ?? "") ?? options.minSeconds
        case "--only": options.only = args.popFirst()
        case "--file": options.file = args.popFirst()
        case "--simdjson": options.simdjson = args.popFirst()
        case "--xml-floor": options.xmlFloor = args.popFirst()
        default: break
        }
    }
    return options
}

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// Median seconds per iteration of `body`.
func measure(minSeconds: Double, _ body: () -> Void) -> Double {
    body()
    var times: [Double] = []
    let start = now()
    while times.count < 5 || now() - start < minSeconds {
        let t0 = now()
        body()
        times.append(now() - t0)
        if times.count >= 1000 { break }
    }
    return median(times)
}

struct Payload {
    let name: String
    let format: String
    let bytes: [UInt8]
}

func loadPayloads(_ options: Options) throws -> [Payload] {
    if let file = options.file {
        guard let data = FileManager.default.contents(atPath: file) else { throw CocoaError(.fileReadNoSuchFile) }
        let format = file.hasSuffix(".xml") ? "xml" : file.hasSuffix(".plist") ? "plist" : "json"
        return [Payload(name: URL(fileURLWithPath: file).lastPathComponent, format: format, bytes: [UInt8](data))]
    }
    var payloads: [Payload] = []
    for file in ["twitter", "citm_catalog", "canada"] {
        let url = URL(fileURLWithPath: options.dataDirectory).appendingPathComponent("\(file).json")
        if let data = FileManager.default.contents(atPath: url.path) {
            payloads.append(Payload(name: "\(file).json", format: "json", bytes: [UInt8](data)))
        } else {
            // Without the canonical files, generated payloads of the same character.
            payloads.append(Payload(name: "\(file)-like.json (generated)", format: "json", bytes: Generated.json(like: file)))
        }
    }
    payloads.append(Payload(name: "catalog.xml (generated)", format: "xml", bytes: Generated.xmlCatalog(minimumBytes: 8_000_000)))
    payloads.append(Payload(name: "twitter.bplist (from twitter.json)", format: "plist", bytes: try Generated.binaryPlist(from: payloads[0].bytes)))
    return payloads
}

/// serializerd's transcode of one payload (the path a route takes after validation).
func ours(_ p: Payload) -> Int {
    switch p.format {
    case "json": return (try? JSONNormalizer.normalize(p.bytes))?.count ?? -1
    case "xml": return (try? XMLTranscoder.transcode(p.bytes))?.bytes.count ?? -1
    // What a route with the default `output.numbers: keep` runs: numbers are not classified.
    default: return (try? PlistTranscoder.transcode(p.bytes, notesNumbers: false))?.bytes.count ?? -1
    }
}

/// `output.numbers` as a route runs it — the json serializer, then the mode — against the
/// normalizer alone, interleaved: `keep` (the default, which must cost nothing) and
/// `count` (the guard: classify every number). One row for BENCHMARKS.
func numbersGuardRow(_ p: Payload, options: Options) -> String {
    func serializer(notesNumbers: Bool) -> any ResponseSerializer {
        var settings = ResponseSettings()
        settings.notesNumbers = notesNumbers
        return try! ResponseSerializerRegistry.make(settings)
    }
    let keep = serializer(notesNumbers: false), count = serializer(notesNumbers: true)
    let response = UpstreamResponse(status: 200, contentType: "application/json", body: p.bytes)
    var alone: [Double] = [], kept: [Double] = [], counted: [Double] = []
    var unsafe = 0
    for _ in 0..<max(options.reps, 5) {
        alone.append(measure(minSeconds: options.minSeconds) { _ = try? JSONNormalizer.normalize(p.bytes) })
        kept.append(measure(minSeconds: options.minSeconds) {
            var result = keep.serialize(response)
            precondition(NumberGuard.apply(&result, mode: .keep) == nil)
        })
        counted.append(measure(minSeconds: options.minSeconds) {
            var result = count.serialize(response)
            unsafe = NumberGuard.apply(&result, mode: .count) ?? -1
        })
    }
    let keepRounds = zip(kept, alone).map { $0 / $1 }, countRounds = zip(counted, alone).map { $0 / $1 }
    return String(format: "output.numbers, %@ (%d unsafe numbers), CPU time ÷ the normalizer alone (%.0f µs): keep %.3f× (per round: median %.3f×, %.3f–%.3f), count %.3f× (median %.3f×, %.3f–%.3f)",
                  p.name, unsafe, median(alone) * 1e6, median(kept) / median(alone), median(keepRounds), keepRounds.min()!, keepRounds.max()!,
                  median(counted) / median(alone), median(countRounds), countRounds.min()!, countRounds.max()!)
}

/// Where output.numbers' time goes on one JSON file: the scan alone, the parts of the check.
func numbersParts(_ path: String) {
    let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
    guard let (json, _) = try? JSONNormalizer.normalizeNotingNumbers(bytes) else { return }
    var lexemes: [Range<Int>] = []
    NumberGuard.forEachNumber(json) { range, _ in lexemes.append(range); return true }
    let normalize = measure(minSeconds: 0.5) { _ = try? JSONNormalizer.normalizeNotingNumbers(bytes) }
    let scan = measure(minSeconds: 0.5) { var n = 0; NumberGuard.forEachNumber(json) { _, _ in n += 1; return true }; precondition(n >= 0) }
    let full = measure(minSeconds: 0.5) { _ = NumberGuard.count(json) }
    var undecided = 0, shaped = 0
    let exact = json.withUnsafeBufferPointer { p in
        measure(minSeconds: 0.5) {
            undecided = 0; shaped = 0
            for r in lexemes {
                let lexeme = UnsafeBufferPointer(rebasing: p[r])
                if NumberSafety.isSafeByShape(lexeme) { shaped += 1; continue }
                if NumberSafety.exactCheck(lexeme) == .undecided { undecided += 1 }
            }
        }
    }
    print(String(format: "%@: %d numbers (%d by shape, %d undecided); normalize %.0f µs, scan %.0f µs, count %.0f µs, shape+exact %.0f µs (%.1f ns a number)",
                 path, lexemes.count, shaped, undecided, normalize * 1e6, scan * 1e6, full * 1e6, exact * 1e6, exact * 1e9 / Double(max(1, lexemes.count))))
}

/// Foundation on the same bytes: JSONSerialization parse+serialize, an XMLParser pass
/// with a counting delegate (no tree), PropertyListSerialization parse.
func foundation(_ p: Payload, _ data: Data) -> Int {
    switch p.format {
    case "json":
        guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]),
              let out = try? JSONSerialization.data(withJSONObject: object, options: [.fragmentsAllowed]) else { return -1 }
        return out.count
    case "xml":
        let parser = XMLParser(data: data)
        let counter = CountingDelegate()
        parser.delegate = counter
        parser.shouldProcessNamespaces = true
        return parser.parse() ? counter.count : -1
    default:
        return (try? PropertyListSerialization.propertyList(from: data, options: [], format: nil)) == nil ? -1 : 1
    }
}

/// libxml2's own SAX2 pass over the same bytes, with the parser, input reading and
/// options the XML transcoder uses and callbacks that do nothing: the floor for any XML →
/// JSON built on it. Returns the elements seen, or -1 when the document is not well-formed.
func libxml2Pass(_ bytes: [UInt8]) -> Int {
    struct Source { var next: UnsafePointer<UInt8>; var left: Int }
    var handler = xmlSAXHandler()
    handler.initialized = UInt32(XML_SAX2_MAGIC)
    handler.startElementNs = { ctx, _, _, _, _, _, _, _, _ in ctx!.assumingMemoryBound(to: Int.self).pointee += 1 }
    handler.endElementNs = { _, _, _, _ in }
    handler.characters = { _, _, _ in }
    handler.cdataBlock = { _, _, _ in }
    handler.getEntity = { _, name in xmlGetPredefinedEntity(name) }
    let read: xmlInputReadCallback = { context, buffer, length in
        let source = context!.assumingMemoryBound(to: Source.self)
        let n = min(Int(length), source.pointee.left)
        UnsafeMutableRawPointer(buffer!).copyMemory(from: source.pointee.next, byteCount: n)
        source.pointee.next += n
        source.pointee.left -= n
        return Int32(n)
    }
    var elements = 0
    return bytes.withUnsafeBufferPointer { buffer in
        var source = Source(next: buffer.baseAddress!, left: buffer.count)
        return withUnsafeMutablePointer(to: &source) { input in
            withUnsafeMutablePointer(to: &elements) { counter in
                guard let ctxt = xmlCreateIOParserCtxt(&handler, counter, read, nil, input, XML_CHAR_ENCODING_NONE) else { return -1 }
                defer { xmlFreeParserCtxt(ctxt) }
                let options = XML_PARSE_NONET.rawValue | XML_PARSE_NOENT.rawValue | XML_PARSE_NOERROR.rawValue
                    | XML_PARSE_NOWARNING.rawValue | XML_PARSE_IGNORE_ENC.rawValue
                xmlCtxtUseOptions(ctxt, Int32(options))
                xmlParseDocument(ctxt)
                return ctxt.pointee.wellFormed != 0 ? counter.pointee : -1
            }
        }
    }
}

final class CountingDelegate: NSObject, XMLParserDelegate {
    var count = 0
    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
        count += 1 + attributeDict.count
    }
    func parser(_ parser: XMLParser, foundCharacters string: String) { count += string.utf8.count }
    func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) { count += CDATABlock.count }
}

/// Runs in a fresh child process: peak RSS growth of one transcode over the input size.
func memoryProbe(format: String, path: String) {
    let bytes = [UInt8](FileManager.default.contents(atPath: path) ?? Data())
    let payload = Payload(name: path, format: format, bytes: bytes)
    // A first pass faults in the code and library pages of the transcoder and of this
    // probe; trimming returns the freed heap, so the measured run's growth is its own
    // working memory.
    _ = ours(payload)
    _ = ProcStatus.kilobytes("VmRSS")
    ProcStatus.resetPeak()
    _ = ProcStatus.kilobytes("VmHWM")
    trimHeap()
    let before = ProcStatus.kilobytes("VmRSS")
    ProcStatus.resetPeak()
    let written = ours(payload)
    let peak = ProcStatus.kilobytes("VmHWM")
    print("\(written) \(Double(peak - before) * 1024 / Double(bytes.count))")
}

/// glibc's malloc_trim(0), which Swift's Glibc module does not export.
func trimHeap() {
    typealias Trim = @convention(c) (Int) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
    _ = unsafeBitCast(symbol, to: Trim.self)(0)
}

enum ProcStatus {
    static func kilobytes(_ field: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
        }
        return 0
    }

    /// Writing 5 to clear_refs resets VmHWM to the current RSS (Linux ≥ 4.0).
    static func resetPeak() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }
}

func peakMemoryRatio(_ p: Payload, scratch: URL) -> Double? {
    let file = scratch.appendingPathComponent(p.name.replacingOccurrences(of: " ", with: "_").replacingOccurrences(of: "/", with: "_"))
    try? Data(p.bytes).write(to: file)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = ["--memory-probe", p.format, file.path]
    let pipe = Pipe()
    process.standardOutput = pipe
    guard (try? process.run()) != nil else { return nil }
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return output.split(separator: " ").last.flatMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
}

/// bench/reference/xml_floor.c on the same bytes: its one-line report, or nil.
func xmlFloorReport(_ helper: String, _ p: Payload, scratch: URL) -> String? {
    let file = scratch.appendingPathComponent("floor-" + p.name.replacingOccurrences(of: " ", with: "_").replacingOccurrences(of: "/", with: "_"))
    guard (try? Data(p.bytes).write(to: file)) != nil else { return nil }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: helper)
    process.arguments = [file.path]
    let pipe = Pipe()
    process.standardOutput = pipe
    guard (try? process.run()) != nil else { return nil }
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { return "exited \(process.terminationStatus) (\(process.terminationReason == .uncaughtSignal ? "signal" : "exit"))" }
    return output.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// simdjson's minifier on the same bytes (bench/simdjson/minify.cpp, its AVX2 kernel), in
/// a child process timed the same way: MB/s, or nil when it did not run.
func simdjsonRate(_ helper: String, _ p: Payload, scratch: URL, minSeconds: Double) -> Double? {
    let file = scratch.appendingPathComponent("simdjson-" + p.name.replacingOccurrences(of: "/", with: "_"))
    guard (try? Data(p.bytes).write(to: file)) != nil else { return nil }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: helper)
    process.arguments = [file.path]
    process.environment = ["SIMDJSON_FORCE_IMPLEMENTATION": "haswell", "MIN_SECONDS": String(minSeconds)]
    let pipe = Pipe()
    process.standardOutput = pipe
    guard (try? process.run()) != nil else { return nil }
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { return nil }
    return output.split(separator: " ").first.flatMap { Double($0) }
}

func run() throws {
    if CommandLine.arguments.count == 4 && CommandLine.arguments[1] == "--memory-probe" {
        memoryProbe(format: CommandLine.arguments[2], path: CommandLine.arguments[3])
        return
    }
    if CommandLine.arguments.count == 4 && CommandLine.arguments[1] == "--worst-probe" {
        WorstCases.probe(index: Int(CommandLine.arguments[2])!, size: Int(CommandLine.arguments[3])!)
        return
    }
    if let at = CommandLine.arguments.firstIndex(of: "--worst-cases") {
        let size = CommandLine.arguments.dropFirst(at + 1).first.flatMap { Int($0) } ?? 8 << 20
        let only = CommandLine.arguments.firstIndex(of: "--only").map { CommandLine.arguments[$0 + 1] }
        exit(WorstCases.run(size: size, only: only) ? 0 : 1)
    }
    if CommandLine.arguments.count == 2 && CommandLine.arguments[1] == "--cache" {
        CacheBench.run()
        return
    }
    if CommandLine.arguments.count == 3 && CommandLine.arguments[1] == "--har" {
        try HARBench.run(CommandLine.arguments[2])
        return
    }
    if CommandLine.arguments.count >= 4 && CommandLine.arguments[1] == "--contract" {
        try ContractBench.run(CommandLine.arguments[2], CommandLine.arguments[3], rounds: Int(CommandLine.arguments.dropFirst(4).first ?? "") ?? 5)
        return
    }
    if CommandLine.arguments.count == 6 && CommandLine.arguments[1] == "--contract-phase" {
        try ContractBench.phase(CommandLine.arguments[2], CommandLine.arguments[3], CommandLine.arguments[4], times: Int(CommandLine.arguments[5]) ?? 1)
        return
    }
    if CommandLine.arguments.count == 3 && CommandLine.arguments[1] == "--numbers-parts" {
        numbersParts(CommandLine.arguments[2])
        return
    }
    let options = parseArguments()
    let payloads = try loadPayloads(options).filter { options.only == nil || $0.name.contains(options.only!) }
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("serializerd-bench-\(getpid())")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }

    var rows: [String] = []
    // The reference column: simdjson's minifier for JSON; for XML, libxml2's own pass (a
    // body the fast path leaves to libxml2 costs that pass plus the JSON builder).
    rows.append("| payload | bytes | serializerd MB/s (min–max) | Foundation MB/s (min–max) | ratio (per round: median, min–max) | reference MB/s (min–max): simdjson minify, libxml2 SAX alone | ÷ reference | output bytes | peak working memory / input |")
    rows.append("|---|---|---|---|---|---|---|---|---|")
    for payload in payloads {
        let data = Data(payload.bytes)
        var oursRates: [Double] = [], theirsRates: [Double] = [], referenceRates: [Double] = []
        let outputBytes = ours(payload)
        guard outputBytes >= 0, foundation(payload, data) >= 0, payload.format != "xml" || libxml2Pass(payload.bytes) > 0 else {
            print("\(payload.name): a transcoder failed on the benchmark payload")
            exit(1)
        }
        let megabytes = Double(payload.bytes.count) / 1e6
        for _ in 0..<options.reps {
            // Interleaved, so host noise hits both sides alike.
            oursRates.append(megabytes / measure(minSeconds: options.minSeconds) { _ = ours(payload) })
            theirsRates.append(megabytes / measure(minSeconds: options.minSeconds) { _ = foundation(payload, data) })
            if payload.format == "json", let helper = options.simdjson,
               let rate = simdjsonRate(helper, payload, scratch: scratch, minSeconds: options.minSeconds) {
                referenceRates.append(rate)
            }
            if payload.format == "xml" {
                referenceRates.append(megabytes / measure(minSeconds: options.minSeconds) { _ = libxml2Pass(payload.bytes) })
            }
        }
        let memory = peakMemoryRatio(payload, scratch: scratch).map { String(format: "%.2f× (%.2f× with the input)", $0, $0 + 1) } ?? "n/a"
        let o = median(oursRates), f = median(theirsRates)
        let reference = referenceRates.isEmpty ? "—" : String(format: "%.0f (%.0f–%.0f)", median(referenceRates), referenceRates.min()!, referenceRates.max()!)
        let versusReference = referenceRates.isEmpty ? "—" : String(format: "%.2f×", o / median(referenceRates))
        // Each round's two sides ran back to back, so their ratio sees one phase of this
        // host's drift, where the medians' ratio can pair a fast phase with a slow one.
        let perRound = zip(oursRates, theirsRates).map { $0 / $1 }
        let row = String(format: "| %@ | %d | **%.0f** (%.0f–%.0f) | %.1f (%.1f–%.1f) | %.2f× (%.2f×, %.2f–%.2f) | %@ | %@ | %d | %@ |",
                         payload.name, payload.bytes.count, o, oursRates.min()!, oursRates.max()!,
                         f, theirsRates.min()!, theirsRates.max()!, o / f, median(perRound), perRound.min()!, perRound.max()!,
                         reference, versusReference, outputBytes, memory)
        rows.append(row)
        print(row)
    }
    // output.numbers through the json serializer (keep, count) against the normalizer alone.
    for payload in payloads where payload.format == "json" {
        let result = numbersGuardRow(payload, options: options)
        rows.append(result)
        print(result)
    }
    if let helper = options.xmlFloor {
        for payload in payloads where payload.format == "xml" {
            let line = "\n\(payload.name), bench/reference/xml_floor.c: " + (xmlFloorReport(helper, payload, scratch: scratch) ?? "did not run")
            rows.append(line)
            print(line)
        }
    }
    let table = rows.joined(separator: "\n") + "\n"
    print("\n" + table)
    if let out = options.outputDirectory {
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let stamp = Int(Date().timeIntervalSince1970)
        try table.write(toFile: "\(out)/transcode-\(stamp).md", atomically: true, encoding: .utf8)
    }
}

try run()
