// DBusTests
