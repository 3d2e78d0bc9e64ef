// MARK: - RingBuffer

/// A first-in first-out buffer stored in one contiguous allocation.
///
/// Used for a stream's kept results (bounded by the stream's capacity: the oldest element is
/// dropped when full) and for a subscriber's queue of deliveries. Not thread-safe: every
/// instance lives inside a `Locked`.
@usableFromInline
struct RingBuffer<Element> {
    @usableFromInline var storage: [Element?]
    @usableFromInline var head = 0
    @usableFromInline var count = 0

    @inlinable
    init(initialCapacity: Int = 4) {
        storage = Array(repeating: nil, count: Swift.max(1, initialCapacity))
    }

    @inlinable
    var isEmpty: Bool { count == 0 }

    /// Appends `element`, doubling the storage when it is full.
    @inlinable
    mutating func append(_ element: Element) {
        if count == storage.count { grow() }
        storage[(head + count) % storage.count] = element
        count += 1
    }

    /// Appends `element`; when `count` already equals `limit`, drops the oldest element first.
    /// - Returns: whether an element was dropped.
    @inlinable @discardableResult
    mutating func append(_ element: Element, droppingOldestBeyond limit: Int) -> Bool {
        var dropped = false
        if count >= limit {
            _ = popFirst()
            dropped = true
        }
        append(element)
        return dropped
    }

    /// Removes and returns the oldest element.
    @inlinable
    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head]
        storage[head] = nil
        head = (head + 1) % storage.count
        count -= 1
        return element
    }

    /// Removes every element and returns them oldest first.
    @inlinable
    mutating func removeAll() -> [Element] {
        var out: [Element] = []
        out.reserveCapacity(count)
        while let element = popFirst() { out.append(element) }
        head = 0
        return out
    }

    /// The elements, oldest first.
    @inlinable
    var elements: [Element] {
        (0..<count).map { storage[(head + $0) % storage.count]! }
    }

    /// Doubles the storage, moving the elements (oldest first) to its start. Inlinable so that
    /// it is specialised with its caller: a kept buffer of a large capacity grows up to it, and
    /// unspecialised code would copy each element through its type's metadata.
    @inlinable
    mutating func grow() {
        var grown = [Element?](repeating: nil, count: storage.count * 2)
        for offset in 0..<count {
            grown[offset] = storage[(head + offset) % storage.count].take()
        }
        storage = grown
        head = 0
    }
}
