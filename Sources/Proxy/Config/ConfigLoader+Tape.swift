import Tapes
import Telemetry
#if canImport(Glibc)
import Glibc
#endif

extension ConfigLoader {
    /// `tapes: { dir }`.
    static func tapesDir(_ node: ConfigNode) throws(ConfigError) -> String {
        let m = try node.mapping(allowed: ["dir"])
        guard let dirNode = m["dir"] else { return relative("./tapes", to: node.file) }
        let dir = try dirNode.string()
        guard !dir.isEmpty, !dir.utf8.contains(0) else { throw dirNode.error("expected a directory path, found '\(dir)'") }
        return relative(dir, to: node.file)
    }

    /// A path from the config, relative to the config file's directory (DESIGN §2).
    static func relative(_ path: String, to file: String) -> String {
        guard !path.hasPrefix("/"), let slash = file.lastIndex(of: "/") else { return path }
        return String(file[...slash]) + path
    }

    /// A route's `tape:`; nil when absent or off.
    static func tape(_ m: [String: ConfigNode], route name: String, config: ServerConfig, store: TapeStore) throws(ConfigError) -> RouteTape? {
        guard let node = m["tape"] else { return nil }
        let t = try node.mapping(allowed: ["mode", "record_misses", "match", "timing"])
        var timing = RouteTape.Timing.recorded
        if let n = t["timing"] {
            let text = try n.string()
            guard let parsed = RouteTape.Timing(rawValue: text) else { throw n.error("expected recorded or fast, found '\(text)'") }
            timing = parsed
        }
        var mode = RouteTape.Mode.record
        if let n = t["mode"] {
            let text = try n.string()
            guard let parsed = RouteTape.Mode(rawValue: text) else {
                throw n.error("expected one of \(RouteTape.Mode.allCases.map(\.rawValue).joined(separator: ", ")), found '\(text)'")
            }
            mode = parsed
        }
        let recordMisses = try t["record_misses"]?.bool() ?? false
        if recordMisses && mode != .replayOrForward, let n = t["record_misses"] {
            throw n.error("record_misses applies to mode: replay_or_forward only")
        }
        let match = try tapeMatch(t["match"])
        guard mode != .off else { return nil }
        let path = config.tapesDir + (config.tapesDir.hasSuffix("/") ? "" : "/") + name + ".har"
        if mode != .replay { try ensureDirectory(config.tapesDir, node: node) }
        do throws(HARError) {
            let tape = try store.tape(path: path, match: match, redaction: config.capture,
                                      keeps: mode == .replay || mode == .replayOrForward)
            return RouteTape(mode: mode, recordMisses: recordMisses, tape: tape, timing: timing)
        } catch {
            throw node.error("the tape \(path) cannot be used: \(error.message) (fix or move the file; serializerd never replaces a tape it cannot read)")
        }
    }

    static func tapeMatch(_ node: ConfigNode?) throws(ConfigError) -> TapeMatch {
        guard let node else { return TapeMatch() }
        let m = try node.mapping(allowed: ["ignore_query", "headers", "body", "ignore_json"])
        let ignoreQuery = try m["ignore_query"]?.strings() ?? []
        var headers: [String] = []
        if let list = m["headers"] {
            for item in try list.sequence() {
                let name = try item.string()
                guard isHeaderName(name) else { throw item.error("expected a header name, found '\(name)'") }
                headers.append(name)
            }
        }
        var body = TapeMatch.Body.ignore
        if let n = m["body"] {
            let text = try n.string()
            guard let parsed = TapeMatch.Body(rawValue: text), parsed != .ignore else { throw n.error("expected exact or json, found '\(text)'") }
            body = parsed
        }
        var pointers: [[[UInt8]]] = []
        if let list = m["ignore_json"] {
            if body != .json, let n = m["ignore_json"] { throw n.error("ignore_json applies to body: json only") }
            for item in try list.sequence() {
                let text = try item.string()
                guard let tokens = Redaction.tokens(text) else { throw item.error("expected a JSON pointer such as /requested_at (RFC 6901; * matches any member or element), found '\(text)'") }
                pointers.append(tokens)
            }
        }
        return TapeMatch(ignoreQuery: ignoreQuery, headers: headers, body: body, ignoreJSON: pointers)
    }

    /// The tapes directory exists (made, 0700, when it does not) and is a directory.
    static func ensureDirectory(_ dir: String, node: ConfigNode) throws(ConfigError) {
        var info = stat()
        if stat(dir, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else { throw node.error("tapes.dir '\(dir)' exists and is not a directory") }
            return
        }
        guard mkdir(dir, 0o700) == 0 || errno == EEXIST else {
            throw node.error("tapes.dir '\(dir)' cannot be created: \(String(cString: strerror(errno)))")
        }
    }
}
