// The owner thread's watched descriptors (see `DescriptorWatch`).
import Glibc
import Locking

extension ConnectionCore {
    // MARK: - Watched descriptors (owner thread)

    /// Adds `entry` to the poll set (from the next poll on).
    func ownerAdd(_ entry: DescriptorEntry) {
        guard !entry.endRequested else {
            entry.ownerEnd(connectionClosed: false)
            return
        }
        ownerDescriptors.append(entry)
    }

    /// Takes `entry` out of the poll set and ends it.
    func ownerEnd(_ entry: DescriptorEntry, connectionClosed: Bool) {
        if let i = ownerDescriptors.firstIndex(where: { $0 === entry }) { ownerDescriptors.remove(at: i) }
        entry.ownerEnd(connectionClosed: connectionClosed)
    }

    /// Runs the handler of each entry `poll` reported (`revents`, in the order of `entries`), in
    /// one wake batch; ends those whose handler returned false.
    func ownerRunReadable(_ entries: [DescriptorEntry], revents: ArraySlice<pollfd>) {
        WakeBatch.run {
            for (entry, fd) in zip(entries, revents) where fd.revents != 0 && !entry.isEnded {
                if !entry.ownerReadable() { ownerEnd(entry, connectionClosed: false) }
            }
        }
    }

    /// Ends every watch as the connection shuts down.
    func ownerEndDescriptors() {
        let entries = ownerDescriptors
        ownerDescriptors = []
        for entry in entries { entry.ownerEnd(connectionClosed: true) }
    }
}
