# guest/bluetoothd.sh: starting, stopping and waiting for bluetoothd inside the VM, shared by
# guest/bluez-up (the bring-up) and the steps that restart it (steps/doctor, steps/soak).
# Source it; it defines functions only. Each wait is a bounded poll of D-Bus (a few hundred ms
# apart, with a deadline): a shell has no cheaper way to wait for bluetoothd.
#
# Environment: BLUEZ_VM_BLUETOOTHD (the binary of BLUEZ_VERSION; the host's by default).

BVM_BTD=${BLUEZ_VM_BLUETOOTHD:-/usr/libexec/bluetooth/bluetoothd}

# bvm_adapters: the adapter object paths bluetoothd exports, one per line.
bvm_adapters() {
	dbus-send --system --print-reply --reply-timeout=2000 --dest=org.bluez / \
		org.freedesktop.DBus.ObjectManager.GetManagedObjects 2>/dev/null |
		grep -oE 'object path "/org/bluez/hci[0-9]+"$' | grep -oE '/org/bluez/hci[0-9]+'
}

# bvm_start_bluetoothd LOG [ARGS...]: starts bluetoothd -n ARGS (stdout and stderr appended
# to LOG) in the background; BVM_BTD_PID is its pid.
bvm_start_bluetoothd() {
	local log=$1; shift
	"$BVM_BTD" -n "$@" >>"$log" 2>&1 &
	BVM_BTD_PID=$!
}

# bvm_stop_bluetoothd [SIGNAL]: signals every bluetoothd (TERM by default) and waits up to 10 s
# until each is gone or a zombie waiting for its parent.
bvm_stop_bluetoothd() {
	local pids pid
	pids=$(pidof bluetoothd) || return 0
	# shellcheck disable=SC2086
	kill "-${1:-TERM}" $pids
	for pid in $pids; do
		timeout 10 bash -c "while [[ -e /proc/$pid && \$(awk '/^State:/ { print \$2 }' /proc/$pid/status 2>/dev/null) != Z ]]; do sleep 0.1; done"
	done
}

# bvm_wait_adapters N PID: waits until bluetoothd (PID) exports N adapters, up to 60 s. On
# failure prints why (PID exited, or how many adapters) and returns 1.
bvm_wait_adapters() {
	local n=$1 pid=$2 have t deadline
	t=$(cut -d' ' -f1 /proc/uptime); deadline=$(( ${t%.*} + 60 ))
	while (( (have = $(bvm_adapters | wc -l)) < n )); do
		kill -0 "$pid" 2>/dev/null || { echo "bluetoothd exited"; return 1; }
		t=$(cut -d' ' -f1 /proc/uptime)
		[[ ${t%.*} -lt $deadline ]] || { echo "only $have/$n adapters on D-Bus 60 s after bluetoothd started"; return 1; }
		sleep 0.3
	done
}

# bvm_power_on: Adapter1.Powered = true on every adapter (the reply comes once mgmt powered it),
# then checks it reads true. On failure prints why and returns 1.
# Lesson: bluetoothd powers each adapter on by itself (AutoEnable) and answers a Set that
# arrives while its own power change is pending with org.bluez.Error.Busy; with -E its adapter
# set-up (experimental features over mgmt) is longer and the window is wide. Busy: ask again.
bvm_power_on() {
	local a tries out
	for a in $(bvm_adapters); do
		tries=0
		until out=$(dbus-send --system --print-reply --reply-timeout=10000 --dest=org.bluez "$a" \
			org.freedesktop.DBus.Properties.Set string:org.bluez.Adapter1 string:Powered variant:boolean:true 2>&1); do
			tries=$((tries + 1))
			[[ $out == *org.bluez.Error.Busy* && $tries -lt 40 ]] || { echo "cannot power on $a: $out"; return 1; }
			sleep 0.5
		done
		dbus-send --system --print-reply --dest=org.bluez "$a" \
			org.freedesktop.DBus.Properties.Get string:org.bluez.Adapter1 string:Powered |
			grep -q 'boolean true' || { echo "$a reports Powered=false"; return 1; }
	done
}
