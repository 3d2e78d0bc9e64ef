import Dispatch
import Glibc
import Futures
import Synchronization

// MARK: - Futures micro-benchmark
//
// Each figure is measured over several runs (min / median / max) and printed next to a Swift
// concurrency baseline doing the same job, with the ratio of the medians (futures / baseline).

/// Runs the futures micro-benchmark and prints one line per figure.
///
/// Figures: promise complete + callback (vs `withCheckedContinuation` resume + await),
/// map and flatMap chains per link (vs the same continuation round trip per link), and
/// `elements` (default 1,000,000) elements through `FutureStream.map` (vs `AsyncStream` yield +
/// iterate). Promises and continuations are `elements` too; chains have `elements / 10` links.
func runFuturesBench(runs: Int = 7, elements: Int = 1_000_000) async {
    let n = max(elements, 1_000)
    print("futures benchmark (\(runs) runs each; process CPU ns per operation; ratio = median / baseline median)")
    let continuation = await measure(runs: runs) { await continuationRoundTrips(n) }
    let complete = await measure(runs: runs) { completeAndCallback(n) }
    report("promise complete + callback", complete, baseline: continuation, baselineName: "checked continuation resume+await")

    let mapChain = await measure(runs: runs) { chain(links: n / 10, flat: false) }
    report("map chain, per link", mapChain, baseline: continuation, baselineName: "checked continuation resume+await")
    let flatChain = await measure(runs: runs) { chain(links: n / 10, flat: true) }
    report("flatMap chain, per link", flatChain, baseline: continuation, baselineName: "checked continuation resume+await")

    let asyncStream = await measure(runs: runs) { await asyncStreamThroughput(n) }
    let futureStream = await measure(runs: runs) { futureStreamThroughput(n) }
    let label = n % 1_000_000 == 0 ? "\(n / 1_000_000)M" : n % 1_000 == 0 ? "\(n / 1_000)k" : "\(n)"
    report("FutureStream map, per element (\(label))", futureStream, baseline: asyncStream, baselineName: "AsyncStream yield+iterate")
}

/// Runs one workload once with `count` operations, for instruction counting under
/// `valgrind --tool=callgrind` (run with two counts and divide the difference by the count
/// difference: start-up costs cancel). Returns false for an unknown workload name.
func runFuturesWorkload(_ name: String, count: Int) async -> Bool {
    let nanos: Double
    switch name {
    case "complete": nanos = completeAndCallback(count)
    case "map": nanos = chain(links: count, flat: false)
    case "flatmap": nanos = chain(links: count, flat: true)
    case "stream": nanos = futureStreamThroughput(count)
    case "continuation": nanos = await continuationRoundTrips(count)
    case "asyncstream": nanos = await asyncStreamThroughput(count)
    default: return false
    }
    print("\(name) x \(count): \((nanos * 10).rounded() / 10) ns per operation")
    return true
}

// MARK: Workloads (each returns nanoseconds per operation)

private func completeAndCallback(_ count: Int) -> Double {
    let sum = SumBox()
    let start = cpuNanoseconds()
    for index in 0..<count {
        let promise = Promise<Int>()
        promise.future.onSuccess(context: .immediate) { sum.add($0) }
        promise.success(index)
    }
    let elapsed = cpuNanoseconds() - start
    precondition(sum.value == count * (count - 1) / 2, "lost callbacks")
    return Double(elapsed) / Double(count)
}

private func continuationRoundTrips(_ count: Int) async -> Double {
    var sum = 0
    let start = cpuNanoseconds()
    for index in 0..<count {
        sum &+= await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
            continuation.resume(returning: index)
        }
    }
    let elapsed = cpuNanoseconds() - start
    precondition(sum == count * (count - 1) / 2)
    return Double(elapsed) / Double(count)
}

private func chain(links: Int, flat: Bool) -> Double {
    let start = cpuNanoseconds()
    let head = Promise<Int>()
    var tail = head.future
    for _ in 0..<links {
        tail = flat
            ? tail.flatMap(context: .immediate) { Future(value: $0 &+ 1) }
            : tail.map(context: .immediate) { $0 &+ 1 }
    }
    head.success(0)
    let elapsed = cpuNanoseconds() - start
    precondition((try? tail.result?.get()) == links, "chain did not complete")
    return Double(elapsed) / Double(links)
}

private func futureStreamThroughput(_ count: Int) -> Double {
    let sum = SumBox()
    let start = cpuNanoseconds()
    let promise = StreamPromise<Int>(capacity: 10)
    promise.stream.map(capacity: 10, context: .immediate) { $0 &* 2 }
        .onSuccess(context: .immediate) { sum.add($0) }
    for index in 0..<count { promise.success(index) }
    let elapsed = cpuNanoseconds() - start
    precondition(sum.value == count * (count - 1), "lost stream elements")
    return Double(elapsed) / Double(count)
}

private func asyncStreamThroughput(_ count: Int) async -> Double {
    let start = cpuNanoseconds()
    let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .unbounded)
    let producer = Task {
        for index in 0..<count { continuation.yield(index) }
        continuation.finish()
    }
    var sum = 0
    for await value in stream.map({ $0 &* 2 }) { sum &+= value }
    await producer.value
    let elapsed = cpuNanoseconds() - start
    precondition(sum == count * (count - 1), "lost AsyncStream elements")
    return Double(elapsed) / Double(count)
}

// MARK: Statistics and output

/// CPU time of the whole process (every thread), in nanoseconds. The figures are CPU time, not
/// wall time: on a shared machine (load 5-18 on 2 cores when `make bench` ran) wall time counts
/// the time the process waited for a core, which inflated "complete + callback" ~5x.
private func cpuNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

private struct Figures {
    let min: Double
    let median: Double
    let max: Double
}

private func measure(runs: Int, _ body: () async -> Double) async -> Figures {
    _ = await body()  // warm-up
    var samples: [Double] = []
    for _ in 0..<Swift.max(5, runs) { samples.append(await body()) }
    samples.sort()
    return Figures(min: samples[0], median: samples[samples.count / 2], max: samples[samples.count - 1])
}

private func report(_ name: String, _ figures: Figures, baseline: Figures, baselineName: String) {
    func format(_ value: Double) -> String {
        let tenths = (value * 10).rounded() / 10
        return "\(tenths)"
    }
    let ratio = (figures.median / baseline.median * 100).rounded() / 100
    print("  \(name): min \(format(figures.min)) / median \(format(figures.median)) / max \(format(figures.max)) ns"
        + "  (\(ratio)x \(baselineName): median \(format(baseline.median)) ns)")
}

/// A sum shared with `@Sendable` callbacks.
private final class SumBox: Sendable {
    // Sendable through this atomic.
    private let total = Atomic<Int>(0)
    func add(_ value: Int) { total.wrappingAdd(value, ordering: .relaxed) }
    var value: Int { total.load(ordering: .relaxed) }
}
