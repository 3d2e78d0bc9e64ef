# Shared by the host-side scripts of Scripts/bluez-vm (sourced, not run).
# Defines the cache layout under the repository's .build/ and small helpers.

# MARK: - Paths

BVM_HOME=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)   # Scripts/bluez-vm
BVM_REPO=$(cd "$BVM_HOME/../.." && pwd)                     # repository root
BVM_CACHE=${BLUEZ_VM_CACHE:-$BVM_REPO/.build/bluez-vm}      # gitignored (.build/)
BVM_KROOT=$BVM_CACHE/kernel                                 # unpacked Debian kernel package
BVM_INITRD=$BVM_CACHE/initramfs.cpio.gz
BVM_BTVIRT=$BVM_CACHE/btvirt                                # patched btvirt (see patches/)
BVM_RUNS=$BVM_CACHE/runs                                    # one directory per VM run

# Host packages the harness needs (Debian bookworm names).
#   qemu-system-x86 busybox-static kmod xz-utils: boot the VM, build the initramfs
#   bluez bluez-test-tools dbus: bluetoothd, btmgmt, btmon, btvirt, dbus-daemon
#   gcc libc6-dev bzip2 patch: build the patched btvirt
#   python3-dbus python3-gi: the python peers of the smoke test
BVM_PACKAGES=(qemu-system-x86 busybox-static kmod xz-utils bluez bluez-test-tools dbus
	gcc libc6-dev bzip2 patch python3-dbus python3-gi)

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
	[[ -e $BVM_KROOT/.done && -s $BVM_INITRD && -x $BVM_KROOT/modprobe.sh ]]
}
