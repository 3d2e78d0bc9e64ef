// Helpers of the peripheral-role integration tests (the rig itself: TestSupport.PeripheralRig,
// started with `recording: true`).
import BlueCapKit
import Foundation
import Futures
import TestSupport

// MARK: - Helpers

func withDeadlineOrNil(_ timeout: Duration = .seconds(5), _ body: @escaping @Sendable () async -> Void) async {
    _ = try? await withDeadline(timeout, "cleanup") { await body(); return true }
}

/// Collects a FutureStream's values for awaiting with a deadline.
func collect<T: Sendable>(_ stream: FutureStream<T>) -> Collector<T> {
    let c = Collector<T>()
    stream.onSuccess(context: .immediate) { c.append($0) }
    return c
}

/// A harness wait or lookup failed.
struct PeripheralTestError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
