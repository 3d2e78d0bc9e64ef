"""What the bluecap-bench peers (peer_bleak.py, peer_simplepyble.py) share: their output lines,
the notification count, and the read workload's split and latency summary.

The peers run as scripts from this folder (Benchmarks/harness/clients.py), so they find this
module next to them.
"""
import sys
import time


def emit(line):
    """One protocol line on stdout ("ready", "result {json}"), flushed at once for the harness."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def notification_counter(count, done):
    """A callback taking each notification's bytes, and a function giving the result so far
    ({"count", "seconds" from the first to the last arrival, "checksum" of every byte}).
    `done.set()` is called once `count` notifications arrived (a threading.Event or an
    asyncio.Event: the callback runs on the thread or loop that waits)."""
    state = {"count": 0, "first": 0.0, "last": 0.0, "sum": 0}

    def on_value(data):
        now = time.monotonic()
        if state["count"] == 0:
            state["first"] = now
        state["last"] = now
        state["count"] += 1
        state["sum"] += sum(data)
        if state["count"] >= count:
            done.set()

    def result():
        return {"count": state["count"], "seconds": state["last"] - state["first"], "checksum": state["sum"]}

    return on_value, result


def shares(count, inflight):
    """`count` reads split over `inflight` workers, the first ones taking one more."""
    return [count // inflight + (1 if i < count % inflight else 0) for i in range(inflight)]


def latency_result(start, checksum, latencies):
    """The result of one-at-a-time reads begun at `start` (time.monotonic()): count, seconds,
    checksum, and the median and 99th percentile latency in microseconds."""
    latencies.sort()
    return {"count": len(latencies), "seconds": time.monotonic() - start, "checksum": checksum,
            "p50_us": latencies[len(latencies) // 2] * 1e6, "p99_us": latencies[len(latencies) * 99 // 100] * 1e6}
