/*
 * baseline: the limit for bluecap-bench. The same client work as every peer, written directly on
 * libdbus with no abstraction: one private connection, blocking reads, no threads, no allocation
 * beyond what libdbus does per message.
 *
 *   baseline notify  --char PATH [--char PATH ...] --count N
 *       AddMatch PropertiesChanged(GattCharacteristic1) per characteristic path, StartNotify each,
 *       print "ready", count Value changes until N have arrived or none came for 2 s after the first.
 *   baseline acquire --char PATH [--char PATH ...] --count N
 *       AcquireNotify each, print "ready", count datagrams (over every socket) until N arrived
 *       or the sockets are idle 2 s.
 *   baseline read    --char PATH --count N [--inflight K]
 *       N ReadValue calls, K outstanding at a time (1: sequential, latency recorded per call).
 *   baseline scan    --adapter PATH --seconds S
 *       AddMatch InterfacesAdded and Device1 PropertiesChanged, StartDiscovery, print "ready",
 *       decode every event for S seconds.
 *
 * The bus is DBUS_SYSTEM_BUS_ADDRESS (as bluetoothd's clients use). The last stdout line is
 * "result {json}" with the client-side figures; CPU and memory are measured by the parent.
 */
#include <dbus/dbus.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CHARS 1024
#define CALL_TIMEOUT_MS 30000

static DBusConnection *conn;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of this process (user + system, to the microsecond). */
static double cpu_now(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/* A "Name: N kB" line of /proc/self/status: VmRSS (the RSS now) or VmHWM (the peak since exec;
 * the parent's ru_maxrss also counts the pages a vfork child shared before exec). */
static long status_kb(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, field, n) && line[n] == ':' && sscanf(line + n + 1, "%ld", &kb) == 1) break;
    if (f) fclose(f);
    return kb;
}

static void die(const char *what, DBusError *err) {
    fprintf(stderr, "baseline: %s: %s\n", what, err && dbus_error_is_set(err) ? err->message : "failed");
    exit(1);
}

/* Calls method `member` of `iface` on org.bluez at `path` with no arguments; returns the reply. */
static DBusMessage *call(const char *path, const char *iface, const char *member, DBusMessage *msg) {
    DBusError err;
    dbus_error_init(&err);
    if (!msg) msg = dbus_message_new_method_call("org.bluez", path, iface, member);
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(conn, msg, CALL_TIMEOUT_MS, &err);
    dbus_message_unref(msg);
    if (!reply) die(member, &err);
    return reply;
}

static void add_match(const char *rule) {
    DBusError err;
    dbus_error_init(&err);
    dbus_bus_add_match(conn, rule, &err);
    if (dbus_error_is_set(&err)) die("AddMatch", &err);
}

/* Appends an empty a{sv} to msg (the options argument of ReadValue/AcquireNotify). */
static DBusMessage *with_empty_options(DBusMessage *msg) {
    DBusMessageIter it, dict;
    dbus_message_iter_init_append(msg, &it);
    dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "{sv}", &dict);
    dbus_message_iter_close_container(&it, &dict);
    return msg;
}

/* Sums the bytes of an `ay` (the work every client does: touch the value). */
static unsigned sum_bytes(DBusMessageIter *variant_or_array) {
    DBusMessageIter arr = *variant_or_array, inner;
    if (dbus_message_iter_get_arg_type(&arr) == DBUS_TYPE_VARIANT) {
        dbus_message_iter_recurse(&arr, &inner);
        arr = inner;
    }
    if (dbus_message_iter_get_arg_type(&arr) != DBUS_TYPE_ARRAY) return 0;
    dbus_message_iter_recurse(&arr, &inner);
    const unsigned char *bytes = NULL;
    int n = 0;
    dbus_message_iter_get_fixed_array(&inner, &bytes, &n);
    unsigned s = 0;
    for (int i = 0; i < n; i++) s += bytes[i];
    return s;
}

/* PropertiesChanged(s, a{sv}, as): 1 when the changed dict holds "Value" (its bytes summed). */
static int value_changed(DBusMessage *m, unsigned *sum) {
    DBusMessageIter it, dict, entry;
    if (!dbus_message_iter_init(m, &it) || !dbus_message_iter_next(&it)) return 0;
    if (dbus_message_iter_get_arg_type(&it) != DBUS_TYPE_ARRAY) return 0;
    dbus_message_iter_recurse(&it, &dict);
    while (dbus_message_iter_get_arg_type(&dict) == DBUS_TYPE_DICT_ENTRY) {
        const char *key;
        dbus_message_iter_recurse(&dict, &entry);
        dbus_message_iter_get_basic(&entry, &key);
        if (strcmp(key, "Value") == 0) {
            dbus_message_iter_next(&entry);
            *sum += sum_bytes(&entry);
            return 1;
        }
        dbus_message_iter_next(&dict);
    }
    return 0;
}

static void ready(void) {
    printf("ready\n");
    fflush(stdout);
}

// MARK: notify

static int run_notify(const char **chars, int nchars, long count) {
    char rule[512];
    for (int i = 0; i < nchars; i++) {
        snprintf(rule, sizeof rule,
                 "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',"
                 "member='PropertiesChanged',path='%s',arg0='org.bluez.GattCharacteristic1'", chars[i]);
        add_match(rule);
    }
    for (int i = 0; i < nchars; i++) dbus_message_unref(call(chars[i], "org.bluez.GattCharacteristic1", "StartNotify", NULL));
    ready();
    double cpu0 = cpu_now();
    long got = 0;
    unsigned sum = 0;
    double first = 0, last = 0;
    while (got < count) {
        DBusMessage *m = dbus_connection_pop_message(conn);
        if (!m) {
            /* 2 s of silence after the first value ends the run (values were lost). */
            if (got && now() - last > 2.0) break;
            if (!dbus_connection_read_write(conn, got ? 2000 : -1)) break;
            continue;
        }
        if (dbus_message_is_signal(m, "org.freedesktop.DBus.Properties", "PropertiesChanged") && value_changed(m, &sum)) {
            last = now();
            if (got++ == 0) first = last;
        }
        dbus_message_unref(m);
    }
    printf("result {\"count\": %ld, \"seconds\": %.9f, \"checksum\": %u, \"self_cpu_s\": %.6f, \"hwm_kb\": %ld}\n", got, last - first, sum,
           cpu_now() - cpu0, status_kb("VmHWM"));
    return 0;
}

// MARK: acquire

static int run_acquire(const char **chars, int nchars, long count) {
    struct pollfd pfd[MAX_CHARS];
    for (int c = 0; c < nchars; c++) {
        DBusMessage *msg = with_empty_options(dbus_message_new_method_call("org.bluez", chars[c], "org.bluez.GattCharacteristic1", "AcquireNotify"));
        DBusMessage *reply = call(chars[c], NULL, NULL, msg);
        DBusError err;
        dbus_error_init(&err);
        int fd = -1;
        dbus_uint16_t mtu = 0;
        if (!dbus_message_get_args(reply, &err, DBUS_TYPE_UNIX_FD, &fd, DBUS_TYPE_UINT16, &mtu, DBUS_TYPE_INVALID)) die("AcquireNotify reply", &err);
        dbus_message_unref(reply);
        pfd[c] = (struct pollfd){.fd = fd, .events = POLLIN};
    }
    ready();
    double cpu0 = cpu_now();
    long got = 0;
    unsigned sum = 0;
    double first = 0, last = 0;
    unsigned char buf[1024];
    while (got < count) {
        /* Drain every socket that has datagrams, then wait for the next. */
        int progress = 0;
        for (int c = 0; c < nchars && got < count; c++) {
            for (;;) {
                ssize_t n = recv(pfd[c].fd, buf, sizeof buf, MSG_DONTWAIT);
                if (n > 0) {
                    for (ssize_t i = 0; i < n; i++) sum += buf[i];
                    last = now();
                    if (got++ == 0) first = last;
                    progress = 1;
                    if (got >= count) break;
                    continue;
                }
                if (n == 0 || (errno != EAGAIN && errno != EINTR)) goto done;
                break;
            }
        }
        if (progress || got >= count) continue;
        /* Idle: wait for the next datagram; 2 s of silence after the first ends the run. */
        int r = poll(pfd, (nfds_t)nchars, got ? 2000 : -1);
        if (r == 0) break;
    }
done:
    for (int c = 0; c < nchars; c++) close(pfd[c].fd);
    printf("result {\"count\": %ld, \"seconds\": %.9f, \"checksum\": %u, \"self_cpu_s\": %.6f, \"hwm_kb\": %ld}\n", got, last - first, sum,
           cpu_now() - cpu0, status_kb("VmHWM"));
    return 0;
}

// MARK: read

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static DBusMessage *read_call(const char *path) {
    return with_empty_options(dbus_message_new_method_call("org.bluez", path, "org.bluez.GattCharacteristic1", "ReadValue"));
}

static int run_read(const char *path, long count, int inflight) {
    ready();
    unsigned sum = 0;
    double start = now();
    if (inflight <= 1) {
        double *lat = malloc(sizeof(double) * (size_t)count);
        for (long i = 0; i < count; i++) {
            double t0 = now();
            DBusMessage *reply = call(path, NULL, NULL, read_call(path));
            lat[i] = now() - t0;
            DBusMessageIter it;
            if (dbus_message_iter_init(reply, &it)) sum += sum_bytes(&it);
            dbus_message_unref(reply);
        }
        double total = now() - start;
        qsort(lat, (size_t)count, sizeof(double), cmp_double);
        printf("result {\"count\": %ld, \"seconds\": %.9f, \"p50_us\": %.3f, \"p99_us\": %.3f, \"checksum\": %u}\n", count,
               total, lat[count / 2] * 1e6, lat[(count * 99) / 100] * 1e6, sum);
        free(lat);
        return 0;
    }
    /* K outstanding: send until K are pending, then take replies off the queue as they come. */
    long sent = 0, done = 0;
    while (done < count) {
        while (sent < count && sent - done < inflight) {
            DBusMessage *m = read_call(path);
            if (!dbus_connection_send(conn, m, NULL)) die("send", NULL);
            dbus_message_unref(m);
            sent++;
        }
        DBusMessage *m = dbus_connection_pop_message(conn);
        if (!m) {
            if (!dbus_connection_read_write(conn, -1)) die("connection lost", NULL);
            continue;
        }
        int type = dbus_message_get_type(m);
        if (type == DBUS_MESSAGE_TYPE_METHOD_RETURN) {
            DBusMessageIter it;
            if (dbus_message_iter_init(m, &it)) sum += sum_bytes(&it);
            done++;
        } else if (type == DBUS_MESSAGE_TYPE_ERROR) {
            fprintf(stderr, "baseline: ReadValue: %s\n", dbus_message_get_error_name(m));
            exit(1);
        }
        dbus_message_unref(m);
    }
    printf("result {\"count\": %ld, \"seconds\": %.9f, \"checksum\": %u}\n", count, now() - start, sum);
    return 0;
}

// MARK: scan

/* Walks a{sv} of Device1 properties, reading RSSI and counting the entries. */
static long walk_properties(DBusMessageIter *dict_array, int *rssi) {
    DBusMessageIter dict, entry, v;
    long n = 0;
    dbus_message_iter_recurse(dict_array, &dict);
    while (dbus_message_iter_get_arg_type(&dict) == DBUS_TYPE_DICT_ENTRY) {
        const char *key;
        dbus_message_iter_recurse(&dict, &entry);
        dbus_message_iter_get_basic(&entry, &key);
        if (strcmp(key, "RSSI") == 0) {
            dbus_message_iter_next(&entry);
            dbus_message_iter_recurse(&entry, &v);
            dbus_int16_t r = 0;
            if (dbus_message_iter_get_arg_type(&v) == DBUS_TYPE_INT16) dbus_message_iter_get_basic(&v, &r);
            *rssi = r;
        }
        n++;
        dbus_message_iter_next(&dict);
    }
    return n;
}

static int run_scan(const char *adapter, double seconds) {
    add_match("type='signal',sender='org.bluez',interface='org.freedesktop.DBus.ObjectManager',member='InterfacesAdded'");
    add_match("type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
              "arg0='org.bluez.Device1'");
    dbus_message_unref(call(adapter, "org.bluez.Adapter1", "StartDiscovery", NULL));
    ready();
    double end = now() + seconds;
    long added = 0, changed = 0, props = 0;
    int rssi = 0;
    for (;;) {
        DBusMessage *m = dbus_connection_pop_message(conn);
        if (!m) {
            double left = end - now();
            if (left <= 0) break;
            if (!dbus_connection_read_write(conn, (int)(left * 1000) + 1)) break;
            continue;
        }
        DBusMessageIter it, ifaces, entry;
        if (dbus_message_is_signal(m, "org.freedesktop.DBus.ObjectManager", "InterfacesAdded") && dbus_message_iter_init(m, &it)) {
            dbus_message_iter_next(&it);
            dbus_message_iter_recurse(&it, &ifaces);
            while (dbus_message_iter_get_arg_type(&ifaces) == DBUS_TYPE_DICT_ENTRY) {
                const char *name;
                dbus_message_iter_recurse(&ifaces, &entry);
                dbus_message_iter_get_basic(&entry, &name);
                if (strcmp(name, "org.bluez.Device1") == 0) {
                    dbus_message_iter_next(&entry);
                    props += walk_properties(&entry, &rssi);
                    added++;
                }
                dbus_message_iter_next(&ifaces);
            }
        } else if (dbus_message_is_signal(m, "org.freedesktop.DBus.Properties", "PropertiesChanged") && dbus_message_iter_init(m, &it)) {
            dbus_message_iter_next(&it);
            props += walk_properties(&it, &rssi);
            changed++;
        }
        dbus_message_unref(m);
    }
    printf("result {\"added\": %ld, \"changed\": %ld, \"properties\": %ld, \"seconds\": %.3f, \"rss_kb\": %ld, \"hwm_kb\": %ld}\n",
           added, changed, props, seconds, status_kb("VmRSS"), status_kb("VmHWM"));
    return 0;
}

// MARK: main

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: baseline notify|acquire|read|scan [options]\n");
        return 2;
    }
    const char *chars[MAX_CHARS];
    int nchars = 0, inflight = 1;
    long count = 0;
    double seconds = 10;
    const char *adapter = "/org/bluez/hci0";
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--char") && nchars < MAX_CHARS) chars[nchars++] = argv[i + 1];
        else if (!strcmp(argv[i], "--count")) count = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--inflight")) inflight = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--adapter")) adapter = argv[i + 1];
        else {
            fprintf(stderr, "baseline: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    DBusError err;
    dbus_error_init(&err);
    const char *address = getenv("DBUS_SYSTEM_BUS_ADDRESS");
    if (!address) die("DBUS_SYSTEM_BUS_ADDRESS is not set", NULL);
    conn = dbus_connection_open_private(address, &err);
    if (!conn || !dbus_bus_register(conn, &err)) die("connect", &err);
    int rc;
    if (!strcmp(argv[1], "notify") && nchars > 0) rc = run_notify(chars, nchars, count);
    else if (!strcmp(argv[1], "acquire") && nchars > 0) rc = run_acquire(chars, nchars, count);
    else if (!strcmp(argv[1], "read") && nchars == 1) rc = run_read(chars[0], count, inflight);
    else if (!strcmp(argv[1], "scan")) rc = run_scan(adapter, seconds);
    else {
        fprintf(stderr, "baseline: bad command line\n");
        return 2;
    }
    fflush(stdout);
    dbus_connection_close(conn);
    dbus_connection_unref(conn);
    return rc;
}
