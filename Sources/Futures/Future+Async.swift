// MARK: - async/await bridge

extension Future {
    /// The value, awaited. Throws the future's error, or `CancellationError` if the awaiting task
    /// is cancelled first (the future itself is not affected; only the wait stops).
    ///
    /// Inlinable, so that the caller's module specialises it for `T` (no generic metadata looked
    /// up at run time for each await).
    @inlinable
    public var value: T {
        get async throws {
            if let result { return try result.get() }
            let token = CancelToken()
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                    let registered = addCallback(
                        context: .immediate, token: token,
                        onCancel: { continuation.resume(throwing: CancellationError()) }
                    ) { result in
                        continuation.resume(with: result)
                    }
                    if !registered { continuation.resume(throwing: CancellationError()) }
                }
            } onCancel: {
                token.cancel()
            }
        }
    }
}

// MARK: - Constructors

/// A future completed with the value `task` returns (or the error it throws) when run on `context`.
public func future<T: Sendable>(
    context: any ExecutionContext = .futuresDefault,
    _ task: @escaping @Sendable () throws -> T
) -> Future<T> {
    let promise = Promise<T>()
    context.execute { promise.complete(Result { try task() }) }
    return promise.future
}

/// A future completed with the value the async `task` returns (or the error it throws); `task`
/// runs in a new unstructured `Task`.
public func future<T: Sendable>(
    priority: TaskPriority? = nil,
    _ task: @escaping @Sendable () async throws -> T
) -> Future<T> {
    let promise = Promise<T>()
    Task(priority: priority) {
        do { promise.success(try await task()) } catch { promise.failure(error) }
    }
    return promise.future
}
