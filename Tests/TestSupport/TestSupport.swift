// TestSupport: private dbus-daemon and process helpers for the bus test tiers.
