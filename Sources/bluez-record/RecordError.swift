// RecordError: why bluez-record stopped, in words for its user.

// MARK: - RecordError

/// A failure of `bluez-record`: printed on stderr, exit status 1.
struct RecordError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
