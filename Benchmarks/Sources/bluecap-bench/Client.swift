// bluecap-bench client: the BlueCapKit peer of the benchmark harness (Benchmarks/harness).
//
//   bluecap-bench client notify|acquire|read|scan --variant futurestream|async|async-stream|acquire|default|default-async
//     (async and default-async also as async-executor, default-async-executor: on the session's task executor)
//   bluecap-bench client scan-pair --variant single|shared|separate|gateway   (GatewayBench.swift)
//   bluecap-bench client footprint --variant one-session|four-sessions
//       [--address A ...] [--service UUID] [--uuid UUID] [--count N] [--inflight K] [--seconds S] [--warm N]
//
// Does the same work as Benchmarks/baseline/baseline.c through the public BlueCapKit API on the
// system bus (DBUS_SYSTEM_BUS_ADDRESS): the harness has already connected the devices, so setup is
// retrievePeripherals + connect (already connected) + discoverServices + discoverCharacteristics.
// Prints "ready" once set up, then "result {json}".
import BlueCapKit
import Dispatch
import Foundation
import Futures
import Glibc
import Synchronization
import Locking

// MARK: - Options

struct ClientOptions {
    var workload = ""
    var variant = "futurestream"
    var addresses: [String] = []
    var service = "FFF0"
    var uuid = "FFF1"
    var count = 1000
    var inflight = 1
    var seconds = 10.0
    /// scan: print "ready" only once this many devices have been reported (their `Peripheral`
    /// objects made), so that the measurement is the steady state.
    var warm = 0
    /// A variant ending in "-executor" (`async-executor`, `default-async-executor`): the async
    /// consumer runs with the session's task executor as its preference
    /// (`BluetoothSession.taskExecutor`); `variant` is then the rest of the name.
    var onSessionExecutor = false

    init(_ args: ArraySlice<String>) throws {
        var args = args
        workload = args.popFirst() ?? ""
        while let a = args.popFirst() {
            guard let v = args.popFirst() else { throw ClientFailure("\(a) needs a value") }
            switch a {
            case "--variant": variant = v
            case "--address": addresses.append(v)
            case "--service": service = v
            case "--uuid": uuid = v
            case "--count": count = Int(v) ?? count
            case "--inflight": inflight = max(1, Int(v) ?? 1)
            case "--seconds": seconds = Double(v) ?? seconds
            case "--warm": warm = Int(v) ?? 0
            default: throw ClientFailure("unknown option \(a)")
            }
        }
        if variant.hasSuffix("-executor") {
            onSessionExecutor = true
            variant.removeLast("-executor".count)
        }
    }
}

struct ClientFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

/// Process CPU time (user + system, every thread), seconds, to the microsecond (getrusage).
func processCPU() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

// MARK: - Setup

/// The characteristic `uuid` of each device, through the public API.
func characteristics(_ manager: CentralManager, _ o: ClientOptions) async throws -> [Characteristic] {
    try await manager.whenPoweredOn().value
    guard let service = BLEUUID(string: o.service), let uuid = BLEUUID(string: o.uuid) else { throw ClientFailure("bad UUID") }
    var out: [Characteristic] = []
    for address in o.addresses {
        guard let peripheral = manager.retrievePeripherals(withAddresses: [address]).first else {
            throw ClientFailure("\(address) unknown to BlueZ")
        }
        for try await event in peripheral.connect().values {
            guard event.connectionEvent == .connect else { throw ClientFailure("connect: \(event.connectionEvent)") }
            break
        }
        let discovered = try await peripheral.discoverServices([service]).value
        guard let s = discovered.service(service) else { throw ClientFailure("no service \(service)") }
        guard let c = try await s.discoverCharacteristics([uuid]).value.characteristic(uuid) else {
            throw ClientFailure("no characteristic \(uuid)")
        }
        out.append(c)
    }
    return out
}

// MARK: - Counting

/// The sum of a value's bytes (the work every client does: touch the value), through a buffer
/// pointer as the baseline sums libdbus's fixed array (Data's element iterator costs more than
/// the sum itself).
func byteSum(_ data: Data?) -> Int {
    data?.withUnsafeBytes { bytes in bytes.reduce(0) { $0 &+ Int($1) } } ?? 0
}

/// Counts deliveries from any thread; `done` runs once when `target` is reached.
final class Counter: Sendable {
    // Sendable through this mutex.
    private let state = Locked<(count: Int, sum: Int, first: ContinuousClock.Instant?, last: ContinuousClock.Instant?)>((0, 0, nil, nil))
    private let target: Int
    private let finished = DispatchSemaphore(value: 0)

    init(target: Int) { self.target = target }

    func add(_ data: Data?) {
        let now = ContinuousClock.now
        let sum = byteSum(data)
        let reached = state.withLock { s -> Bool in
            s.count += 1
            s.sum &+= sum
            if s.first == nil { s.first = now }
            s.last = now
            return s.count == target
        }
        if reached { finished.signal() }
    }

    /// Waits (off the cooperative pool) until the target is reached, or `idle` passes with no
    /// progress; returns the result JSON.
    func wait(idle: Duration = .seconds(5)) async -> String {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { [self] in
                var seen = -1
                while finished.wait(timeout: .now() + .nanoseconds(Int(idle.components.seconds) * 1_000_000_000)) == .timedOut {
                    let now = state.withLock { $0.count }
                    if now == seen { break }
                    seen = now
                }
                c.resume()
            }
        }
        return state.withLock { s in
            let span = s.first.flatMap { f in s.last.map { seconds($0 - f) } } ?? 0
            return "{\"count\": \(s.count), \"seconds\": \(span), \"checksum\": \(s.sum)}"
        }
    }
}

// MARK: - Workloads

func clientNotify(_ manager: CentralManager, _ o: ClientOptions) async throws {
    let chars = try await characteristics(manager, o)
    let total = o.count  // over every characteristic
    let counter = Counter(target: total)
    var tasks: [Task<Void, any Error>] = []
    // "default" and "default-async": whatever transport BlueCapKit picks (AcquireNotify on a
    // "notify" characteristic), consumed through a FutureStream or an AsyncSequence.
    let isDefault = o.variant.hasPrefix("default")
    let isAsync = o.variant.hasSuffix("async") || o.variant == "async-stream"
    for c in chars {
        // The async bridge has no back-pressure: its buffer (the stream's capacity) is sized to
        // the burst so that nothing is dropped while the consumer catches up.
        let stream = c.receiveNotificationUpdates(capacity: isAsync ? total : 1)
        _ = try await c.startNotifying().value
        let transport = c.notificationTransport
        if !isDefault && (o.variant == "acquire") != (transport == .acquiredSocket) {
            throw ClientFailure("variant \(o.variant) got transport \(String(describing: transport))")
        }
        if o.variant == "async-stream" {
            // The A/B reference for `values`: the same iteration over an AsyncThrowingStream
            // fed by a callback subscription (what `values` was before its own channel and
            // sequence type, `FutureStream.Values`).
            let values = AsyncThrowingStream<NotificationUpdate, any Error>(
                bufferingPolicy: .bufferingNewest(stream.subscriberBacklog)) { continuation in
                let token = CancelToken()
                continuation.onTermination = { _ in token.cancel() }
                stream.onComplete(context: .immediate, cancelToken: token) { result in
                    switch result {
                    case .success(let update): continuation.yield(update)
                    case .failure(let error): continuation.finish(throwing: error)
                    }
                }
            }
            tasks.append(Task.detached {
                for try await update in values { counter.add(update.data) }
            })
        } else if isAsync && o.onSessionExecutor {
            tasks.append(Task(executorPreference: manager.session.taskExecutor) {
                for try await update in stream.values { counter.add(update.data) }
            })
        } else if isAsync {
            tasks.append(Task.detached {
                for try await update in stream.values { counter.add(update.data) }
            })
        } else {
            stream.onSuccess(context: .immediate) { update in counter.add(update.data) }
        }
    }
    emit("ready")
    let cpu0 = processCPU()
    let result = await counter.wait()
    // The CPU from ready to the last value (or the idle end), to the microsecond: the harness's
    // own measure starts from /proc's clock ticks (10 ms), too coarse for a paced run's few ms.
    emit("result " + result.dropLast() + ", \"self_cpu_s\": \(processCPU() - cpu0), \"hwm_kb\": \(peakResidentKB())}")
    for t in tasks { t.cancel() }
}

func clientRead(_ manager: CentralManager, _ o: ClientOptions) async throws {
    guard let c = try await characteristics(manager, o).first else { throw ClientFailure("no characteristic") }
    emit("ready")
    let clock = ContinuousClock()
    let start = clock.now
    let box = Shared()
    @Sendable func add(_ data: Data?) { box.add(data) }
    let share = (0..<o.inflight).map { o.count / o.inflight + ($0 < o.count % o.inflight ? 1 : 0) }
    var latencies: [Duration] = []
    if o.variant == "async" {
        // "async-executor": the same loops on the session's task executor.
        let executor: (any TaskExecutor)? = o.onSessionExecutor ? manager.session.taskExecutor : nil
        latencies = try await withTaskExecutorPreference(executor) {
            var latencies: [Duration] = []
            if o.inflight == 1 {
                latencies.reserveCapacity(o.count)
                for _ in 0..<o.count {
                    let t0 = clock.now
                    add(try await c.read().value.value)
                    latencies.append(clock.now - t0)
                }
            } else {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for n in share {
                        group.addTask { for _ in 0..<n { add(try await c.read().value.value) } }
                    }
                    try await group.waitForAll()
                }
            }
            return latencies
        }
    } else {
        // Futures only: each completion starts the next read of its chain.
        let chains = DispatchGroup()
        @Sendable func chain(_ left: Int) {
            guard left > 0 else { return chains.leave() }
            let t0 = clock.now
            c.read().onComplete(context: .immediate) { result in
                switch result {
                case .success(let ch):
                    if o.inflight == 1 { let d = clock.now - t0; box.latencies.withLock { $0.append(d) } }
                    add(ch.value)
                    chain(left - 1)
                case .failure(let e):
                    box.failure.withLock { $0 = e }
                    chains.leave()
                }
            }
        }
        for n in share { chains.enter(); chain(n) }
        await withCheckedContinuation { (k: CheckedContinuation<Void, Never>) in chains.notify(queue: .global()) { k.resume() } }
        if let e = box.failure.withLock({ $0 }) { throw e }
        latencies = box.latencies.withLock { $0 }
    }
    let total = seconds(clock.now - start)
    var json = "{\"count\": \(o.count), \"seconds\": \(total), \"checksum\": \(box.sum.load(ordering: .relaxed))"
    if !latencies.isEmpty {
        latencies.sort()
        let p50 = seconds(latencies[latencies.count / 2]) * 1e6, p99 = seconds(latencies[latencies.count * 99 / 100]) * 1e6
        json += ", \"p50_us\": \(p50), \"p99_us\": \(p99)"
    }
    emit("result " + json + "}")
}

func clientScan(_ manager: CentralManager, _ o: ClientOptions) async throws {
    try await manager.whenPoweredOn().value
    let box = Shared()
    let warmed = DispatchSemaphore(value: 0)
    let stream = manager.startScanning(options: ScanOptions(allowDuplicates: true))
    stream.onSuccess(context: .immediate) { p in
        box.sum.wrappingAdd(1, ordering: .relaxed)
        _ = p.rssi
        // The devices seen (a peripheral is one object per device for the manager's lifetime).
        let count = box.seen.withLock { seen -> Int in
            seen.insert(ObjectIdentifier(p)).inserted ? seen.count : 0
        }
        if count == o.warm { warmed.signal() }
    }
    if o.warm > 0 {
        await withCheckedContinuation { (k: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                warmed.wait()
                k.resume()
            }
        }
        box.sum.store(0, ordering: .relaxed)
    }
    emit("ready")
    try await Task.sleep(for: .seconds(o.seconds))
    emit("result {\"events\": \(box.sum.load(ordering: .relaxed)), \"devices\": \(box.seen.withLock { $0.count }), "
         + "\"seconds\": \(o.seconds), \"rss_kb\": \(residentKB()), \"hwm_kb\": \(peakResidentKB())}")
}

/// State shared with completion callbacks.
final class Shared: Sendable {
    // Sendable through these atomics and mutexes.
    let sum = Atomic<Int>(0)
    let latencies = Locked<[Duration]>([])
    let failure = Locked<(any Error)?>(nil)
    let seen = Locked<Set<ObjectIdentifier>>([])

    func add(_ data: Data?) {
        let s = byteSum(data)
        sum.wrappingAdd(s, ordering: .relaxed)
    }
}

/// `bluecap-bench client ...`.
func runClient(_ args: ArraySlice<String>) async throws {
    let o = try ClientOptions(args)
    switch o.workload {
    case "scan-pair": return try await clientScanPair(o)
    case "footprint": return try await clientFootprint(o)
    default: break
    }
    let manager = CentralManager(adapter: "hci0")
    switch o.workload {
    case "notify", "acquire": try await clientNotify(manager, o)
    case "read": try await clientRead(manager, o)
    case "scan": try await clientScan(manager, o)
    default: throw ClientFailure("unknown workload \(o.workload)")
    }
}
