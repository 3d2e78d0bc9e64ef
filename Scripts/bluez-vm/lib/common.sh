# Shared by the host-side scripts of Scripts/bluez-vm (sourced, not run).
# Defines the cache layout under the repository's .build/ and small helpers.

# MARK: - Paths

BVM_HOME=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)   # Scripts/bluez-vm
BVM_REPO=$(cd "$BVM_HOME/../.." && pwd)                     # repository root
BVM_CACHE=${BLUEZ_VM_CACHE:-$BVM_REPO/.build/bluez-vm}      # gitignored (.build/)
BVM_KROOT=$BVM_CACHE/kernel                                 # unpacked Debian kernel package
BVM_INITRD=$BVM_CACHE/initramfs.cpio.gz
BVM_BTVIRT=$BVM_CACHE/btvirt                                # patched btvirt (see patches/)
BVM_SNOOP=$BVM_CACHE/hci-snoop                              # guest/hci-snoop.c: btmon -w, undecoded
BVM_RUNS=$BVM_CACHE/runs                                    # one directory per VM run
BVM_TP_VENV=$BVM_CACHE/thirdparty-venv                      # bumble + rootcanal (peers/thirdparty)
BVM_TP_REQUIREMENTS=$BVM_HOME/peers/thirdparty/requirements.txt

# MARK: - BlueZ versions
# BLUEZ_VERSION picks the bluetoothd the VM runs: 5.66 is the host's own package (Debian 12);
# the others are built by setup from Debian's sources of the suite that ships them, into
# $BVM_CACHE/bluez-VERSION/ (README "BlueZ versions").
BVM_BLUEZ_HOST_VERSION=5.66
declare -A BVM_BLUEZ_SUITE=([5.55]=bullseye [5.82]=trixie)   # Debian 11, Debian 13
BVM_BLUEZ_VERSION=${BLUEZ_VERSION:-$BVM_BLUEZ_HOST_VERSION}

# The versions test-vm and setup accept, in order.
bvm_bluez_versions() { printf '%s\n' "$BVM_BLUEZ_HOST_VERSION" "${!BVM_BLUEZ_SUITE[@]}" | sort -V; }

# Dies unless $1 is a version setup knows how to provide.
bvm_check_bluez_version() {
	[[ $1 == "$BVM_BLUEZ_HOST_VERSION" || -n ${BVM_BLUEZ_SUITE[$1]:-} ]] ||
		bvm_die "BLUEZ_VERSION=$1 is not supported: use one of $(bvm_bluez_versions | tr '\n' ' ')"
}

# The bluetoothd binary of version $1 (default: $BLUEZ_VERSION).
bvm_bluetoothd() {
	local v=${1:-$BVM_BLUEZ_VERSION}
	if [[ $v == "$BVM_BLUEZ_HOST_VERSION" ]]; then echo /usr/libexec/bluetooth/bluetoothd
	else echo "$BVM_CACHE/bluez-$v/bluetoothd"; fi
}

# Host packages the harness needs (Debian bookworm names).
#   qemu-system-x86 busybox-static kmod xz-utils: boot the VM, build the initramfs
#   bluez bluez-test-tools dbus: bluetoothd, btmgmt, btmon, btvirt, dbus-daemon
#   gcc libc6-dev bzip2 patch: build the patched btvirt
#   python3-dbus python3-gi: the python peers of the smoke test
#   python3-venv: the third-party peer tier's venv (bumble, rootcanal from PyPI)
BVM_PACKAGES=(qemu-system-x86 busybox-static kmod xz-utils bluez bluez-test-tools dbus
	gcc libc6-dev bzip2 patch python3-dbus python3-gi python3-venv)
# Only when BLUEZ_VERSION is not the host's: building bluetoothd from Debian's sources
# (dpkg-source, configure's pkg-config checks, make), gdb for backtraces inside the VM.
BVM_BLUEZ_BUILD_PACKAGES=(dpkg-dev make pkg-config libglib2.0-dev libdbus-1-dev gdb)

# MARK: - Helpers

bvm_say() { echo "bluez-vm: $*" >&2; }
bvm_die() { echo "bluez-vm: $*" >&2; exit "${BVM_DIE_CODE:-2}"; }

# Seconds since the epoch with nanoseconds, and the difference of two such stamps.
bvm_now() { date +%s.%N; }
bvm_elapsed() { awk -v a="$2" -v b="$1" 'BEGIN { printf "%.1f", a - b }'; }

# The kernel version unpacked under $BVM_KROOT (empty before setup).
bvm_kver() { ls "$BVM_KROOT/lib/modules" 2>/dev/null | head -1; }

# True when setup has produced everything `run` needs.
bvm_ready() {
	[[ -e $BVM_KROOT/.done && -s $BVM_INITRD && -x $BVM_KROOT/modprobe.sh && -x $(bvm_bluetoothd) ]] && bvm_tp_ready
}

# The RootCanal controller binary inside the venv's rootcanal wheel.
bvm_tp_rootcanal() { echo "$BVM_TP_VENV"/lib/python3*/site-packages/rootcanal/bin/linux-x86_64/rootcanal; }

# Whether the third-party venv exists and was made from today's requirements file.
bvm_tp_ready() {
	[[ -x $BVM_TP_VENV/bin/python && $(cat "$BVM_TP_VENV/.requirements" 2>/dev/null) == "$(sha256sum < "$BVM_TP_REQUIREMENTS")" ]]
}
