import EventLoop
import HTTPCore
import Network
import Serializers

extension RequestPipeline {
    /// Decides what the route's network conditions (and an admin client's fault headers)
    /// do to this request and notes it on the context; a failure for unreadable headers.
    func planNetwork(_ context: RequestContext, route: Route) -> ProxyFailure? {
        let request = context.request
        let runtime = networkOverrides.current(route.name, now: clock.wall())
        guard let base = runtime ?? route.network else { return nil }
        if faultDiceVersion != networkOverrides.version {
            faultDiceVersion = networkOverrides.version
            faultDice = [:]
        }
        var settings = base
        var fault: Fault?
        var chaos = base.chaos
        let askedFault = request.fields.first("Serializerd-Fault"), askedChaos = request.fields.first("Serializerd-Chaos")
        if askedFault != nil || askedChaos != nil {
            if base.headerControl && config.allowsAdmin(peer: request.peerAddress, unix: request.peerIsUnixSocket) {
                do throws(NetworkSyntaxError) {
                    if let text = askedFault {
                        let asked = try FaultRequest.parse(text)
                        settings = asked.over(settings)
                        fault = asked.fault
                    }
                    if let text = askedChaos { chaos += try ChaosOperation.parse(text) }
                } catch {
                    return .badRequest("Serializerd-\(askedFault != nil ? "Fault" : "Chaos"): \(error.description)")
                }
            } else {
                telemetry.metrics.ignoredFaultHeader(route: route.name)
            }
        }
        let key = ObjectIdentifier(route)
        var dice = faultDice[key] ?? FaultDice(seed: settings.seed ?? UInt64.random(in: 0...UInt64.max))
        if fault == nil { fault = dice.fault(settings) }
        // A reply is never held past the route's timeout: the client would have given up.
        let latency = min(dice.latency(settings.latency, jitter: settings.jitter), route.timeout)
        faultDice[key] = dice

        let plan = NetworkPlan()
        plan.fault = fault
        plan.chaos = chaos
        var delay = latency
        var ending = ReplyShaping.Ending.whole
        switch fault {
        case .reset: ending = .reset
        case .truncate: ending = .truncate
        case .timeout: delay += route.timeout
        case .status, nil: break
        }
        if delay > 0 || settings.down != nil || ending != .whole {
            if ending != .whole || budget.shapedReplies < config.limits.maxActiveFaults {
                plan.shaping = ReplyShaping(delay: delay, bytesPerSecond: settings.down, ending: ending)
                if latency > 0 { plan.applied.append("latency=\(Int((latency * 1000).rounded()))ms") }
                if let down = settings.down { plan.applied.append("down=\(down)") }
            }
        }
        // The body was read at this pace before the request got here (`uploadRate`).
        if let up = settings.up, !request.body.isEmpty { plan.applied.append("up=\(up)") }
        if let fault { plan.applied.append(fault.applied) }
        context.network = plan
        return nil
    }

    /// The pace a request's body is read at (`network.up`, or an admin client's `up=`),
    /// asked by the server once the head is in and a body follows.
    func uploadRate(_ head: RequestHead, peer: String, unix: Bool) -> Int? {
        guard shapesUploads || networkOverrides.isActive, let target = RequestTarget(head.target),
              case .route(let route) = table.match(method: head.method, path: target.path, host: target.host),
              let settings = networkOverrides.current(route.name, now: clock.wall()) ?? route.network else { return nil }
        if settings.headerControl, let text = head.fields.first("Serializerd-Fault"), config.allowsAdmin(peer: peer, unix: unix),
           let asked = try? FaultRequest.parse(text), let up = asked.up {
            return up
        }
        return settings.up
    }

    /// The answer after the plan's chaos, before the serializer reads it.
    /// How many events a truncated stream keeps (1 to 8), from the route's seeded draws.
    func drawStreamCut(_ route: Route) -> Int {
        let key = ObjectIdentifier(route)
        guard var dice = faultDice[key] else { return 1 }
        defer { faultDice[key] = dice }
        return 1 + Int(dice.next() % 8)
    }

    func damage(_ reply: UpstreamResponse, chaos: [ChaosOperation], _ context: RequestContext) -> (UpstreamResponse, Bool) {
        let (damaged, applied) = Chaos.apply(chaos, to: reply, maxDepth: config.limits.maxJSONDepth)
        context.network?.applied += applied
        return (damaged, !applied.isEmpty)
    }
}
