import Serializers

/// The route's request serializer (DESIGN §4), then the upstream URL from the path past
/// the prefix and the serialized query.
struct RequestSerializationStage: RequestStage {
    func run(_ context: RequestContext, route: Route, in pipeline: RequestPipeline) -> StageStep {
        let request = context.request, limits = pipeline.config.limits
        do throws(RequestSerializationError) {
            context.serialized = try route.requestSerializer.serialize(RequestInput(
                method: request.method, query: context.query, contentType: request.fields.first("Content-Type"), body: request.body,
                maxDepth: limits.maxJSONDepth, maxOutput: limits.maxRequestSerializerOutput))
        } catch {
            return .refused(.badRequest(error.description))
        }
        switch route.upstream.join(remainder: context.remainder, query: context.serialized.query) {
        case .failure(let escape):
            return .refused(.invalidPath(escape.description))
        case .success(let url):
            context.upstreamURL = url
            context.upstreamSent = .init(lines: [], body: context.serialized.body)
            return .passed
        }
    }
}
