import Resilience

/// `limits.concurrency` (DESIGN §11): a slot of the route's gate before the upstream; with
/// every slot taken the request waits in the route's FIFO queue (parked, woken on this
/// worker when a slot is handed to it), or is `overloaded` when the queue is full.
struct QueueStage: RequestStage {
    func run(_ context: RequestContext, route: Route, in pipeline: RequestPipeline) -> StageStep {
        guard let gate = route.gate, let limits = route.limits, context.gateSlot == nil else { return .passed }
        let mailbox = pipeline.mailbox
        switch gate.enter(wake: { id in mailbox.post(.gateOpened(id)) }) {
        case .go:
            context.gateSlot = gate
            return .passed
        case .queued(let id):
            pipeline.wait(context, id: id, gate: gate, route: route, timeout: limits.queueTimeout)
            return .parked
        case .full:
            pipeline.refuseQueued(context, route: route, hint: "The route's queue is full: \(limits.queue) requests wait for one of its \(limits.concurrency) upstream slots (limits.queue).")
            return .answered
        }
    }
}
