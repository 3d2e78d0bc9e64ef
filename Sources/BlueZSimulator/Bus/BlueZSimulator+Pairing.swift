// BlueZSimulator+Pairing: pairing faults and settings of the simulated bluetoothd.

extension BlueZSimulator {
    /// The SMP timeout (default 30 s, the kernel's): a pairing whose agents or peer stay silent
    /// this long fails with `AuthenticationTimeout` and the agents get `Cancel`.
    public var pairingTimeout: Duration {
        get { sync { $0.pairingTimeout } }
        set { sync { $0.pairingTimeout = newValue } }
    }

    /// Fault: the spec'd peripheral at `address` loses its bond with us (re-pairing needed).
    public func loseBond(peripheral address: String) { sync { $0.loseBond(peripheral: address) } }

    /// The unique name of the default agent's connection, if one is registered.
    public var defaultAgentOwner: String? { sync { $0.defaultAgentOwner } }
}
