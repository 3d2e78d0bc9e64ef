// SetRefusal: why a `…/set` write was refused or failed (the text of its result).

import Foundation

/// Why a `…/set` was not applied.
package struct SetRefusal: Error, Sendable {
    package let reason: String
    package let id: String?
    package init(_ reason: String, id: String?) {
        self.reason = reason
        self.id = id
    }
}
