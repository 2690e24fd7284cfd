/// A schema that applies itself without moving into the instance (`$ref` to itself, or
/// through `allOf` and the like) would never finish on any instance: a schema error.
enum SchemaCycles {
    static func check(_ nodes: [SchemaNode]) throws(SchemaError) {
        var state: [ObjectIdentifier: UInt8] = [:]   // 1 on the path, 2 done
        for start in nodes where state[ObjectIdentifier(start)] == nil {
            // Iterative depth-first search: the graph may be deep.
            var stack: [(SchemaNode, [SchemaNode], Int)] = [(start, inPlace(start), 0)]
            state[ObjectIdentifier(start)] = 1
            while let (node, next, i) = stack.last {
                guard i < next.count else {
                    state[ObjectIdentifier(node)] = 2
                    stack.removeLast()
                    continue
                }
                stack[stack.count - 1].2 += 1
                let child = next[i]
                switch state[ObjectIdentifier(child)] {
                case 1?:
                    throw SchemaError(location: child.location, message: "applies itself without moving into the instance (a $ref cycle)")
                case nil:
                    state[ObjectIdentifier(child)] = 1
                    stack.append((child, inPlace(child), 0))
                default:
                    break
                }
            }
        }
    }

    /// The schemas a node applies to its own instance.
    static func inPlace(_ node: SchemaNode) -> [SchemaNode] {
        var out: [SchemaNode] = []
        for check in node.checks {
            switch check {
            case .ref(let link): if let target = link.node { out.append(target) }
            case .allOf(let s), .anyOf(let s), .oneOf(let s): out += s
            case .not(let s): out.append(s)
            case .conditional(let condition, let then, let otherwise): out += [condition] + [then, otherwise].compactMap { $0 }
            case .dependentSchemas(let s): out += s.map(\.1)
            default: break
            }
        }
        return out
    }
}
