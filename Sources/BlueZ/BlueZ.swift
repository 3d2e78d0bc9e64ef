// BlueZ: org.bluez proxies.
