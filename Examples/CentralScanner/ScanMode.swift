// ScanMode: central-scanner's scan mode: a live table or one line per device, through
// bluetoothd restarting (the scan resumes once the adapter is powered on again).

import BlueCapKit
import Foundation
import ExampleSupport

extension ScannerCommand {
    // MARK: - Scan mode

    static func scan(_ manager: CentralManager, _ options: ScannerOptions, _ console: Console,
                     cleanup: @escaping @Sendable () async -> Void) async -> Int32 {
        let view = ScanView(console: console)
        SignalTrap.shared.onShutdown {
            _ = view.finish()
            await cleanup()
        }
        SignalTrap.shared.install()
        do { _ = try await manager.whenPoweredOn(timeout: .seconds(10)).value } catch {
            console.error(ExampleFailure.adapter(manager.state, adapter: options.adapter).description)
            return MissingBlueZ.exitCode
        }
        view.start()
        let end = options.duration.map { ContinuousClock.now + $0 }
        while true {
            if !view.live {
                console.event("scanning", [("adapter", .optional(manager.adapter)), ("services", .array(options.services.map { .string($0.uuidString) }))],
                              text: "scanning on \(manager.adapter ?? "?")" + (options.services.isEmpty ? "" : " for \(options.services.map(\.description).joined(separator: ", "))"))
            }
            let failure = await scanOnce(manager, options, view, timeout: end.map { max(.zero, $0 - .now) })
            guard let failure else { break }
            // bluetoothd restarted, or the adapter went away: wait for it, then scan on.
            guard let error = failure as? CentralManagerError, error.kind == .adapterUnavailable else {
                _ = view.finish()
                console.error("scan failed: \(failure)")
                return 1
            }
            view.forgetReported()
            if !view.live {
                console.event("interrupted", [("reason", .string(error.message))],
                              text: "scan interrupted (\(error.message)); waiting for the adapter to be powered on again")
            }
            let wait = end.map { max(.zero, $0 - .now) } ?? .seconds(86_400)
            do { _ = try await manager.whenPoweredOn(timeout: wait).value } catch {
                if let end, ContinuousClock.now >= end { break }
                _ = view.finish()
                console.error(ExampleFailure.adapter(manager.state, adapter: options.adapter).description)
                return MissingBlueZ.exitCode
            }
        }
        let count = view.finish()
        console.event("done", [("devices", .integer(count))], text: "scan finished: \(count) device\(count == 1 ? "" : "s")")
        return 0
    }

    /// One scan, until `timeout` (nil: until it fails or is stopped): nil when it ended by its
    /// timeout or was stopped, the error otherwise.
    private static func scanOnce(_ manager: CentralManager, _ options: ScannerOptions, _ view: ScanView,
                                 timeout: Duration?) async -> (any Error)? {
        if let timeout, timeout <= .zero { return nil }
        let prefix = options.namePrefix
        let scan = manager.startScanning(forServiceUUIDs: options.services.isEmpty ? nil : options.services,
                                         timeout: timeout, options: ScanOptions(allowDuplicates: true))
        scan.onSuccess { peripheral in
            if let prefix, !(peripheral.name ?? "").hasPrefix(prefix) { return }
            let ad = peripheral.advertisement
            view.update(ScanRow(address: peripheral.address, name: peripheral.name ?? ad.localName, rssi: peripheral.rssi,
                                uuids: ad.serviceUUIDs, manufacturerData: ad.manufacturerData, lastSeen: .now,
                                advertisement: ad))
        }
        return await withCheckedContinuation { (c: CheckedContinuation<(any Error)?, Never>) in
            let once = Promise<(any Error)?>()
            scan.onFailure { error in
                // The end of the --duration scan, not a failure.
                if let error = error as? CentralManagerError, error.kind == .scanTimedOut {
                    once.success(nil)
                } else {
                    once.success(error)
                }
            }
            scan.onFinish { once.success(nil) }
            once.future.onSuccess { c.resume(returning: $0) }
        }
    }
}
