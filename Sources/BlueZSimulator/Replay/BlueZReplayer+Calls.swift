// BlueZReplayer+Calls: the app's calls answered from the recording; BlueZ's calls into the app made.
import DBus

// MARK: - Calls of the app

extension BlueZReplayer {
    /// Answers a call of the app as recorded, or with the divergence (on `queue`).
    func answer(_ call: MethodCall, _ responder: Responder) {
        guard !stopped else { return responder.fail(name: DBusRemoteError.failed, message: "the replay has stopped") }
        if let sender = call.sender { app = sender }
        let seen = ScenarioMessage(path: call.path?.rawValue ?? "", interface: call.interface ?? "", member: call.member ?? "",
                                   arguments: call.body)
        switch state.withLock({ $0.match(seen) }) {
        case .diverged(let message):
            ReplayLog.divergence(message)
            responder.fail(name: Self.divergedError, message: message)
        case .unordered(let outcome):
            respond(responder, outcome)
        case .matched(let index, let outcome, let inOrder):
            if inOrder {
                deferred[index] = responder
                advance()
            } else {
                respond(responder, outcome)
            }
        }
    }

    /// Answers as recorded.
    func respond(_ responder: Responder, _ outcome: ScenarioOutcome) {
        switch outcome {
        case .reply(let values): responder.succeed(values)
        case .error(let name, let message): responder.fail(name: name, message: message)
        case .none: held.append(responder)
        }
    }

    /// `Properties.Set` of the app (on the connection's thread): matched like any call; the
    /// recorded error is thrown, a divergence too.
    func propertySet(_ path: String, _ interface: String, _ name: String, _ value: DBusValue, _ call: MethodCall) throws(DBusRemoteError) {
        let seen = ScenarioMessage(path: path, interface: "org.freedesktop.DBus.Properties", member: "Set",
                                   arguments: [.string(interface), .string(name), .variant(value)])
        switch state.withLock({ $0.match(seen) }) {
        case .diverged(let message):
            ReplayLog.divergence(message)
            throw DBusRemoteError(name: Self.divergedError, message: message)
        case .unordered(let outcome):
            if case .error(let name, let message) = outcome { throw DBusRemoteError(name: name, message: message) }
        case .matched(_, let outcome, _):
            queue.async { [self] in
                if let sender = call.sender { app = sender }
                advance()
            }
            if case .error(let name, let message) = outcome { throw DBusRemoteError(name: name, message: message) }
        }
    }

    // MARK: Recorded events

    /// Sends recorded signal `index`, or makes recorded call `index` into the app (on `queue`).
    func perform(_ index: Int) {
        guard !stopped else { return }
        switch scenario.events[index] {
        case .signal(_, let m):
            state.withLock { $0.markReached(index) }
            send(m, index: index)
        case .incoming(_, let m, let recorded):
            // The app's objects carry its process id: the path of this run (ReplayPaths).
            let path = state.withLock { $0.paths.seen(forRecorded: m.path) }
            guard let app, let op = try? ObjectPath(path) else {
                state.withLock { $0.record("replay could not call into the app (\(m)): the app has made no call yet, so its bus name is unknown") }
                return
            }
            state.withLock { $0.markReached(index) }
            connection.call(destination: app, path: op, interface: m.interface, member: m.member, arguments: m.arguments,
                            timeout: .seconds(25)) { [weak self] result in
                let seen: ScenarioOutcome = switch result {
                case .success(let reply): .reply(reply.body)
                case .failure(.remote(let e)): .error(name: e.name, message: e.message)
                case .failure(let e): .error(name: "transport", message: "\(e)")
                }
                guard recorded != .none, let self, !self.state.withLock({ $0.paths.same(recorded, seen) }) else { return }
                self.state.withLock { $0.record("replay diverged: the app answered \(m) with \(seen), recorded \(recorded)") }
            }
        case .call:
            break
        }
    }
}
