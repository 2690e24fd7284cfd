internal import CVector
/// Property lists → JSON; XML and binary told apart by content, not by Content-Type.
public enum PlistTranscoder {
    /// `notesNumbers`: count the numbers no double holds exactly as they are written
    /// (`output.numbers` other than `keep`).
    public static func transcode(_ body: [UInt8], maxDepth: Int = JSONReadOptions.defaultMaxDepth,
                                 budget: OutputBudget? = nil, notesNumbers: Bool = true) throws(TranscodeError) -> NormalizedJSON {
        let budget = budget ?? OutputBudget(input: body.count)
        if notesNumbers { serializerd_note_number_check() }
        if body.starts(with: Array("bplist".utf8)) {
            guard body.starts(with: Array("bplist00".utf8)) else {
                throw TranscodeError("unsupported binary property list version '\(String(decoding: body.prefix(8), as: UTF8.self))'")
            }
            let (json, unsafe) = try BinaryPlistReader.transcodeNotingNumbers(body, maxDepth: maxDepth, budget: budget, notesNumbers: notesNumbers)
            return NormalizedJSON(trusted: json, knownUnsafeNumbers: unsafe)
        }
        let builder = PlistXMLBuilder(maxDepth: maxDepth, budget: budget, notesNumbers: notesNumbers)
        try XMLSAXParser.parse(body, sink: builder)
        let (json, unsafe) = try builder.finish()
        return NormalizedJSON(trusted: json, knownUnsafeNumbers: unsafe)
    }
}
