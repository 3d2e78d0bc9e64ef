// BlueZSimulator+ATT: the ATT bearer's and Disconnect's timing of the simulated bluetoothd.

extension BlueZSimulator {
    /// bluetoothd's ATT transaction timeout (default 30 s): how long a read the peripheral leaves
    /// unanswered (``SimulatedPeripheral/leavesReadsUnanswered(of:count:)``) holds the link's GATT
    /// requests before they fail and the bearer closes: every GATT call then fails with
    /// `org.bluez.Error.Failed` "Not connected" while `Device1.Connected` stays true for
    /// ``linkDropAfterATTTimeout``, then the link drops. Set it shorter in tests.
    public var attTimeout: Duration {
        get { sync { $0.attTimeout } }
        set { sync { $0.attTimeout = newValue } }
    }

    /// How long the link stays up after the ATT timeout closed its bearer (default 2 s, as
    /// bluetoothd 5.66 was seen to) unless a `Device1.Disconnect` takes it down first.
    public var linkDropAfterATTTimeout: Duration {
        get { sync { $0.linkDropAfterATTTimeout } }
        set { sync { $0.linkDropAfterATTTimeout = newValue } }
    }

    /// How long `Device1.Disconnect` of a connected device takes to bring the link down
    /// (bluetoothd waits 2 s, its DISCONNECT_TIMER; default zero). Meanwhile the link is up and a
    /// `Device1.Connect` is answered at once, as already connected.
    public var disconnectDelay: Duration {
        get { sync { $0.disconnectDelay } }
        set { sync { $0.disconnectDelay = newValue } }
    }

    /// How long after the link comes up the ATT channel is (default zero: at once). Otherwise
    /// `Device1.Connected` = true goes out first and `Device1.Connect` is answered once the
    /// channel is up, as bluetoothd on Linux 6.x with a controller whose LE features the kernel
    /// reads first (RootCanal, real controllers); a `Device1.Pair` or a second `Connect` in that
    /// window fails `org.bluez.Error.InProgress`, as bluetoothd 5.82 answers.
    public var attChannelDelay: Duration {
        get { sync { $0.attChannelDelay } }
        set { sync { $0.attChannelDelay = newValue } }
    }

    /// How long the old ATT bearer outlives a link that went down (default zero: it goes with
    /// the link). bluetoothd 5.82 releases it when the kernel's disconnection event reaches it,
    /// which can come after it answered `Device1.Disconnect` and sent `Connected` = false; a
    /// `Device1.Connect` in that window fails `org.bluez.Error.Failed` "Operation already in
    /// progress".
    public var attTeardownDelay: Duration {
        get { sync { $0.attTeardownDelay } }
        set { sync { $0.attTeardownDelay = newValue } }
    }
}
