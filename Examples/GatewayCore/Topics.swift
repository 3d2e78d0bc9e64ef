// Topics: every topic the gateway publishes to or listens on.

import Foundation

/// The topic tree of one gateway, under `<prefix>/<gateway>/`:
/// - `status`: `online` / `offline` (retained; `offline` is also the last will);
/// - `stats`: counts (retained, after each connection and every 10 s);
/// - `<address>/state`: `{"connected": true|false}` (retained);
/// - `<address>/<characteristic>`: readings (QoS 1, not retained unless configured);
/// - `<address>/<characteristic>/set`: writes in, `…/set/result`: their results out;
/// - `adv/<address>`: advertisements that match a pattern.
package struct Topics: Sendable {
    package let prefix: String
    package let gateway: String

    package init(prefix: String, gateway: String) {
        self.prefix = prefix
        self.gateway = gateway
    }

    package var base: String { "\(prefix)/\(gateway)" }
    package var status: String { "\(base)/status" }
    package var stats: String { "\(base)/stats" }
    package func state(_ address: String) -> String { "\(base)/\(address)/state" }
    package func reading(_ address: String, _ characteristic: String) -> String { "\(base)/\(address)/\(characteristic)" }
    package func set(_ address: String, _ characteristic: String) -> String { reading(address, characteristic) + "/set" }
    package func result(_ address: String, _ characteristic: String) -> String { set(address, characteristic) + "/result" }
    package func advertisement(_ address: String) -> String { "\(base)/adv/\(address)" }
    /// The filter for every write.
    package var setFilter: String { "\(base)/+/+/set" }

    /// The device address and characteristic name of a `…/<address>/<characteristic>/set` topic.
    package func parseSet(_ topic: String) -> (address: String, characteristic: String)? {
        guard topic.hasPrefix(base + "/") else { return nil }
        let levels = topic.dropFirst(base.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 3, levels[2] == "set" else { return nil }
        return (String(levels[0]), String(levels[1]))
    }
}
