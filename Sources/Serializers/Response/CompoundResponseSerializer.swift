/// AFCompoundResponseSerializer: the first member that yields a value wins — with its
/// own error, when the value came with one (a parsed 500 body: AF returns the object
/// and the status error together) — and the other members' errors are dropped; if none does, the raw serializer's result,
/// validated with the compound's own lists. Members check their own default content
/// types but the route's status codes (DESIGN §5).
struct CompoundResponseSerializer: ResponseSerializer {
    static let name = SerializerName.compound.rawValue

    let members: [any ResponseSerializer]
    let fallback: RawResponseSerializer

    func serialize(_ response: UpstreamResponse) -> SerializationResult {
        for member in members {
            let result = member.serialize(response)
            if result.value != nil { return result }
        }
        return fallback.serialize(response)
    }
}
