/* hci-snoop FILE: what `btmon -w FILE` records, without btmon's decoding.
 *
 * Reads the kernel's HCI monitor channel (every controller's commands, events and ACL data,
 * the mgmt traffic, as btmon sees them) and writes each record to FILE in the btsnoop format
 * btmon writes (type 2001, "monitor"): `btmon -r FILE` reads it. btmon also decodes and prints
 * every packet, which the VM sends to /dev/null: under TCG that was about a tenth of a test
 * step's guest CPU (32 s of 237 in vm-tests). Records are written through a buffer, flushed
 * when the channel has been quiet for 200 ms, at least once a second, and on SIGTERM/SIGINT.
 *
 * Built by Scripts/bluez-vm/setup on the host (gcc -O2), run by guest/bluez-up.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define AF_BLUETOOTH_ 31
#define BTPROTO_HCI_ 1
#define HCI_DEV_NONE_ 0xffff
#define HCI_CHANNEL_MONITOR_ 2

struct sockaddr_hci_ {
	sa_family_t hci_family;
	unsigned short hci_dev;
	unsigned short hci_channel;
};

/* The monitor channel's header before each packet (little-endian). */
struct monitor_hdr {
	uint16_t opcode;
	uint16_t index;
	uint16_t len;
} __attribute__((packed));

struct btsnoop_pkt {
	uint32_t size, len, flags, drops;
	uint64_t ts;
} __attribute__((packed));

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void) sig; stop = 1; }

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static unsigned char buf[UINT16_MAX], out_buf[1 << 16];
	struct sockaddr_hci_ addr = { AF_BLUETOOTH_, HCI_DEV_NONE_, HCI_CHANNEL_MONITOR_ };
	struct sigaction sa;
	double flushed;
	FILE *out;
	int fd, on = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: hci-snoop FILE\n");
		return 2;
	}
	fd = socket(AF_BLUETOOTH_, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI_);
	if (fd < 0 || bind(fd, (struct sockaddr *) &addr, sizeof(addr)) < 0) {
		perror("hci-snoop: the HCI monitor channel");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMP, &on, sizeof(on));
	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	setvbuf(out, (char *) out_buf, _IOFBF, sizeof(out_buf));
	/* "btsnoop\0", version 1, type 2001 (monitor) */
	fwrite("btsnoop\0\0\0\0\1\0\0\x07\xd1", 1, 16, out);
	fflush(out);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	flushed = now();
	while (!stop) {
		struct pollfd p = { fd, POLLIN, 0 };
		int ready = poll(&p, 1, 200);

		if (ready < 0 && errno != EINTR)
			break;
		if (ready <= 0 || now() - flushed >= 1.0) {
			fflush(out);
			flushed = now();
			if (ready <= 0)
				continue;
		}
		for (;;) {
			unsigned char control[64];
			struct monitor_hdr hdr;
			struct iovec iov[2] = { { &hdr, sizeof(hdr) }, { buf, sizeof(buf) } };
			struct msghdr msg = { 0 };
			struct timeval tv;
			struct cmsghdr *c;
			struct btsnoop_pkt pkt;
			uint16_t len;
			ssize_t n;

			msg.msg_iov = iov;
			msg.msg_iovlen = 2;
			msg.msg_control = control;
			msg.msg_controllen = sizeof(control);
			n = recvmsg(fd, &msg, MSG_DONTWAIT);
			if (n < (ssize_t) sizeof(hdr))
				break;
			gettimeofday(&tv, NULL);
			for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
				if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMP)
					memcpy(&tv, CMSG_DATA(c), sizeof(tv));
			len = le16toh(hdr.len);
			if (len > n - sizeof(hdr))
				len = n - sizeof(hdr);
			pkt.size = pkt.len = htobe32(len);
			pkt.flags = htobe32((uint32_t) le16toh(hdr.index) << 16 | le16toh(hdr.opcode));
			pkt.drops = 0;
			/* microseconds since 2000-01-01, then btsnoop's epoch (year 0) */
			pkt.ts = htobe64(((int64_t) tv.tv_sec - 946684800ll) * 1000000ll + tv.tv_usec + 0x00E03AB44A676000ll);
			fwrite(&pkt, 1, sizeof(pkt), out);
			fwrite(buf, 1, len, out);
		}
	}
	fflush(out);
	fclose(out);
	return 0;
}
