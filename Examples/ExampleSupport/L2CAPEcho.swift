// L2CAPEcho: the examples' L2CAP echo service (accelerometer-peripheral --l2cap) and its client
// (central-scanner --l2cap ADDRESS --psm N).

import BlueCapKit
import Foundation

/// An echo over an L2CAP channel: the peripheral side sends every SDU back; the central side
/// sends a number of bytes and checks they come back, timing it.
package enum L2CAPEcho {
    /// Publishes an echo channel on `manager` (the kernel picks the PSM when `psm` is nil),
    /// prints `{"event":"l2cap","psm":N}`, and echoes every channel opened to it until its
    /// remote closes it. Keep the returned publication: releasing it unpublishes.
    package static func serve(_ manager: PeripheralManager, psm: UInt16? = nil, console: Console) async throws -> L2CAPPublication {
        let publication = try await manager.publishL2CAPChannel(psm: psm).value
        console.event("l2cap", [("psm", .integer(Int(publication.psm))), ("address", .string(publication.address))],
                      text: "L2CAP echo channel published: PSM \(publication.psm) (0x\(String(publication.psm, radix: 16))) on \(publication.address)")
        publication.channels.onSuccess { channel in
            console.event("l2cap-open", [("address", .string(channel.remoteAddress)), ("mtu", .integer(channel.sendMTU))],
                          text: "L2CAP channel from \(channel.remoteAddress) (MTU \(channel.sendMTU))")
            Task {
                var echoed = 0
                do {
                    for try await sdu in channel.received {
                        try await channel.send(sdu).value
                        echoed += sdu.count
                    }
                } catch {}
                channel.close()
                console.event("l2cap-closed", [("address", .string(channel.remoteAddress)), ("bytes", .integer(echoed))],
                              text: "L2CAP channel from \(channel.remoteAddress) closed after echoing \(echoed) bytes")
            }
        }
        return publication
    }

    /// What ``run(_:psm:bytes:)`` measured.
    package struct Result: Sendable {
        /// Whether every byte came back, in order.
        package var matched: Bool
        /// Bytes sent (and expected back).
        package var bytes: Int
        /// From the first send to the last byte back.
        package var seconds: Double
        /// The channel's send MTU.
        package var mtu: Int
        /// Bytes per second each way.
        package var rate: Double { seconds > 0 ? Double(bytes) / seconds : 0 }
    }

    /// Opens a channel to `psm` on `peripheral`, sends `bytes` bytes in windows of 32 kB (sends
    /// of 4 kB, each awaited; each window's echo read before the next), checks the echo, closes.
    package static func run(_ peripheral: Peripheral, psm: UInt16, bytes: Int) async throws -> Result {
        let channel = try await peripheral.openL2CAPChannel(psm: psm).value
        defer { channel.close() }
        var x: UInt32 = 0x9E37_79B9
        let data = Data((0..<bytes).map { _ in
            x ^= x << 13; x ^= x >> 17; x ^= x << 5
            return UInt8(truncatingIfNeeded: x)
        })
        // Windows of 32 kB, each read back before the next is sent: kernels that return LE
        // credits as SDUs arrive (Linux 6.1) do not hold a sender back for a slow reader (see
        // the "L2CAP channels" article).
        let clock = ContinuousClock(), t0 = clock.now
        var back = Data()
        back.reserveCapacity(bytes)
        var offset = 0
        while offset < data.count {
            let windowEnd = min(offset + 32 * 1024, data.count)
            while offset < windowEnd {
                let end = min(offset + 4096, windowEnd)
                try await channel.send(Data(data[offset..<end])).value
                offset = end
            }
            while back.count < windowEnd { back.append(try await channel.receive().value) }
        }
        let elapsed = clock.now - t0
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Result(matched: back == data, bytes: bytes, seconds: seconds, mtu: channel.sendMTU)
    }
}
