// OutgoingQueue: what waits for the broker, bounded.

import Foundation

/// Messages waiting to be handed to libmosquitto, in two parts:
/// - *state* messages (availability, discovery, device state), retained: one per topic, a newer
///   one replacing the older, so they are bounded by the number of topics the configuration
///   names and are never dropped;
/// - *readings*: at most `capacity`; when full, the oldest reading is dropped (the newest value
///   is the one worth delivering) and counted in ``dropped``.
package struct OutgoingQueue {
    package let capacity: Int
    private var state: [MQTTMessage] = []
    private var readings: [MQTTMessage] = []
    private var head = 0
    /// Readings dropped because the queue was full, since the start.
    package private(set) var dropped = 0

    package init(capacity: Int) {
        self.capacity = max(1, capacity)
        readings.reserveCapacity(self.capacity)
    }

    /// Readings waiting.
    package var count: Int { readings.count - head + state.count }

    /// Adds a message; returns true when a reading had to be dropped to make room.
    package mutating func append(_ message: MQTTMessage) -> Bool {
        if message.retain {
            state.removeAll { $0.topic == message.topic }
            state.append(message)
            return false
        }
        var droppedOne = false
        if readings.count - head >= capacity {
            head += 1
            dropped += 1
            droppedOne = true
        }
        readings.append(message)
        compact()
        return droppedOne
    }

    /// The next message to send: state first.
    package mutating func next() -> MQTTMessage? {
        if !state.isEmpty { return state.removeFirst() }
        guard head < readings.count else { return nil }
        let m = readings[head]
        head += 1
        compact()
        return m
    }

    /// Puts a message that could not be handed over back at the front.
    package mutating func putBack(_ message: MQTTMessage) {
        if message.retain {
            if !state.contains(where: { $0.topic == message.topic }) { state.insert(message, at: 0) }
        } else if head > 0 {
            head -= 1
            readings[head] = message
        } else {
            readings.insert(message, at: 0)
            if readings.count > capacity { readings.removeLast(); dropped += 1 }
        }
    }

    private mutating func compact() {
        if head > 0 && head * 2 >= readings.count {
            readings.removeFirst(head)
            head = 0
        }
    }
}
