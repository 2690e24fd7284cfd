/// Property lists → JSON; XML and binary told apart by content, not by Content-Type.
public enum PlistTranscoder {
    public static func transcode(_ body: [UInt8], maxDepth: Int = JSONReadOptions.defaultMaxDepth,
                                 budget: OutputBudget? = nil) throws(TranscodeError) -> NormalizedJSON {
        let budget = budget ?? OutputBudget(input: body.count)
        if body.starts(with: Array("bplist".utf8)) {
            guard body.starts(with: Array("bplist00".utf8)) else {
                throw TranscodeError("unsupported binary property list version '\(String(decoding: body.prefix(8), as: UTF8.self))'")
            }
            let (json, unsafe) = try BinaryPlistReader.transcodeNotingNumbers(body, maxDepth: maxDepth, budget: budget)
            return NormalizedJSON(trusted: json, knownUnsafeNumbers: unsafe)
        }
        let builder = PlistXMLBuilder(maxDepth: maxDepth, budget: budget)
        try XMLSAXParser.parse(body, sink: builder)
        let (json, unsafe) = try builder.finish()
        return NormalizedJSON(trusted: json, knownUnsafeNumbers: unsafe)
    }
}
