/// AFJSONResponseSerializer: validates, then normalizes the JSON in one streaming pass.
struct JSONResponseSerializer: ResponseSerializer {
    static let name = SerializerName.json.rawValue
    static let defaultContentTypes = ["application/json", "text/json", "text/javascript", "*/*+json"]

    let validation: ResponseValidation
    let options: JSONReadOptions
    /// Count the numbers no double holds exactly while normalizing (`output.numbers` other
    /// than `keep`); `keep` never looks at them.
    var notesNumbers = true

    func serialize(_ response: UpstreamResponse) -> SerializationResult {
        validation.serialize(response, as: Self.name) { (body, budget) throws(TranscodeError) in try normalize(body, budget: budget) }
    }

    func serialize(_ response: UpstreamResponse, checking contract: OutputContract?) -> SerializationResult {
        guard let contract else { return serialize(response) }
        return validation.serialize(response, as: Self.name) { (body, budget) throws(TranscodeError) in
            try normalize(body, budget: budget, checking: contract)
        }
    }

    /// An event is normalized as it is: made into an answer first, it cost a tenth of
    /// the event's instructions in copies of the answer's fields.
    func serialize(event data: [UInt8]) -> SerializationResult {
        if validation.statusCodes == nil, validation.contentTypes == nil {
            // A closure, not the method: a method's partial application is allocated.
            return validation.serialize(body: data, as: Self.name) { (body, budget) throws(TranscodeError) in
                try normalize(body, budget: budget)
            }
        }
        return serialize(UpstreamResponse(status: 200, contentType: nil, body: data))
    }

    private func normalize(_ body: [UInt8], budget: OutputBudget, checking contract: OutputContract? = nil) throws(TranscodeError)
        -> NormalizedJSON {
        let json: [UInt8], unsafeNumbers: Int?, vouch: ContractVouch?
        do throws(JSONError) {
            if let contract {
                (json, unsafeNumbers, vouch) = try JSONNormalizer.normalize(body, options: options, countingNumbers: notesNumbers,
                                                                            checking: contract)
            } else if notesNumbers {
                (json, unsafeNumbers) = try JSONNormalizer.normalizeNotingNumbers(body, options: options)
                vouch = nil
            } else {
                (json, unsafeNumbers, vouch) = (try JSONNormalizer.normalize(body, options: options), nil, nil)
            }
        } catch {
            throw TranscodeError(error)
        }
        // Charged once it is written: the normalizer's output buffer is the size of
        // its UTF-8 input, which it cannot outgrow.
        try budget.charge(json.count)
        return NormalizedJSON(trusted: json, knownUnsafeNumbers: unsafeNumbers, vouch: vouch)
    }
}
