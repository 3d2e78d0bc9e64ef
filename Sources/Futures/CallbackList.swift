// MARK: - CallbackList

/// The callbacks waiting on a ``Future``, in registration order.
///
/// The first callback is stored inline: the common case of a future with a single waiting
/// callback (every link of a `map` chain, every `await`) allocates no array. Not thread-safe:
/// every instance lives inside a future's `Locked` state.
@usableFromInline
struct CallbackList<Element> {
    @usableFromInline
    var first: Element?
    @usableFromInline
    var rest: [Element]

    /// An empty list.
    @inlinable
    init() {
        first = nil
        rest = []
    }

    /// Whether the list holds no callback.
    @inlinable
    var isEmpty: Bool {
        if case .none = first { return true }
        return false
    }

    /// The number of callbacks.
    @inlinable
    var count: Int { isEmpty ? 0 : 1 + rest.count }

    /// Appends `element` after the callbacks already in the list.
    @inlinable
    mutating func append(_ element: Element) {
        if case .none = first {
            first = element
        } else {
            rest.append(element)
        }
    }

    /// Removes and returns every callback, leaving the list empty.
    @inlinable
    mutating func takeAll() -> CallbackList {
        var taken = CallbackList()
        swap(&taken, &self)
        return taken
    }

    /// Calls `body` with each callback, in registration order.
    @inlinable
    func forEach(_ body: (Element) throws -> Void) rethrows {
        guard let first else { return }
        try body(first)
        for element in rest { try body(element) }
    }

    /// Removes the callbacks `shouldRemove` accepts, keeping the others in order.
    @inlinable
    mutating func removeAll(where shouldRemove: (Element) throws -> Bool) rethrows {
        let all = takeAll()
        try all.forEach { element in
            if try !shouldRemove(element) { append(element) }
        }
    }
}

// MARK: - CallbackRoute

/// Where and under which cancel token a future's callback runs, when that is not simply the
/// immediate context without a token (which callbacks store as nil, allocating nothing). Its
/// identity also names a removable callback (see `Future.dropInterest(_:)`).
@usableFromInline
final class CallbackRoute: Sendable {
    @usableFromInline
    let context: any ExecutionContext
    @usableFromInline
    let token: CancelToken?
    @usableFromInline
    let tokenID: Int
    /// Whether `context` is an ``ImmediateContext`` (the callback then runs on the trampoline).
    @usableFromInline
    let isImmediate: Bool

    @inlinable
    init(context: any ExecutionContext, token: CancelToken?, tokenID: Int) {
        self.context = context
        self.token = token
        self.tokenID = tokenID
        self.isImmediate = type(of: context) == ImmediateContext.self
    }
}
