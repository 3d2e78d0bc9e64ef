"""The table and verdict of steps/soak (make soak-vm), as Markdown on stdout; exit 1 on FAIL.

Environment (set by steps/soak): ROWS (one line per minute: minute ok interrupted errors lost
notifications restarts rss_central_kb rss_peripheral_kb fds_central fds_peripheral), MINUTES,
RESTART, SUMMARY (the central's `summary k=v ...` line), CENTRAL_RC, PERIPH_ALIVE, RESTARTS, WALL.

Rules:
- exact: no cycle lost, duplicated, reordered or mixed in a notification (the central's LOST
  count is 0; a cycle that completes must have exactly 100, in order) and the central exited 0;
- recovered: the central saw every restart and completed a cycle after each one;
- flat memory: after the warm-up (the first tenth of the run, at least one minute), the average
  VmRSS of the last third of the samples is within max(10 %, 2 MB) of the first third's, for
  each process;
- flat fds: the largest fd count of the last third is at most the first third's + 2 (a cycle
  in flight holds its link's sockets), for each process; the peripheral is alive at the end.
Cycles interrupted by a restart, and cycles that failed before their notifications with no
restart near (errors), are counted but fail nothing by themselves.
"""
import os
import sys

env = os.environ
rows = [[int(x) for x in line.split()] for line in open(env["ROWS"]) if line.strip()]
minutes, restart_every = int(env["MINUTES"]), int(env["RESTART"])
summary = dict(kv.split("=", 1) for kv in env.get("SUMMARY", "").split()[1:])
failures = []

print(f"## make soak-vm: {minutes} min, bluetoothd restarted every {restart_every} min\n")
print("| minute | cycles done | interrupted | errors | lost | notifications | restarts "
      "| RSS central (MB) | RSS peripheral (MB) | fds central | fds peripheral |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]} | {r[6]} "
          f"| {r[7] / 1024:.1f} | {r[8] / 1024:.1f} | {r[9]} | {r[10]} |")
print()
if summary:
    print("central summary: " + ", ".join(f"{k} {v}" for k, v in summary.items())
          + f"; central exit {env.get('CENTRAL_RC')}; wall {env.get('WALL')} s\n")

# MARK: exact and recovered
lost = int(summary.get("lost", "-1"))
if not summary:
    failures.append("the central printed no summary (crashed or killed)")
elif lost != 0:
    failures.append(f"notifications: {lost} cycle(s) lost, duplicated or reordered notifications")
if summary and int(summary.get("ok", "0")) == 0:
    failures.append("no cycle completed")
if summary and int(summary.get("restarts", "-1")) != int(env["RESTARTS"]):
    failures.append(f"restarts: the central saw {summary.get('restarts')} of {env['RESTARTS']}")
if summary and summary.get("recovered") != summary.get("restarts"):
    failures.append(f"recovery: a complete cycle followed {summary.get('recovered')} of {summary.get('restarts')} restarts")
if env.get("CENTRAL_RC") != "0":
    failures.append(f"central: exit status {env.get('CENTRAL_RC')}")
if env.get("PERIPH_ALIVE") != "1":
    failures.append("peripheral: not running at the end")

# MARK: flat RSS and fds
warm = max(1, minutes // 10)
after = [r for r in rows if r[0] >= warm]
third = max(1, len(after) // 3)
first, last = after[:third], after[-third:]
for name, rss_i, fd_i in (("central", 7, 9), ("peripheral", 8, 10)):
    if not after:
        failures.append(f"{name}: no samples after the warm-up")
        continue
    a = sum(r[rss_i] for r in first) / len(first)
    b = sum(r[rss_i] for r in last) / len(last)
    bound = max(0.10 * a, 2048)
    fa, fb = max(r[fd_i] for r in first), max(r[fd_i] for r in last)
    rss_ok, fd_ok = b - a <= bound, fb <= fa + 2
    print(f"- {name}: RSS first third {a / 1024:.1f} MB, last third {b / 1024:.1f} MB "
          f"(growth {(b - a) / 1024:+.1f} MB, bound {bound / 1024:.1f} MB): {'flat' if rss_ok else 'GROWING'}; "
          f"fds max {fa} then {fb}: {'flat' if fd_ok else 'GROWING'}")
    if not rss_ok:
        failures.append(f"{name} RSS grew {(b - a) / 1024:.1f} MB (bound {bound / 1024:.1f} MB)")
    if not fd_ok:
        failures.append(f"{name} fds grew from {fa} to {fb}")

print(f"\nrules: warm-up {warm} min excluded; thirds of {third} sample(s); RSS last-third average within "
      "max(10 %, 2 MB) of the first third's; fds last-third max <= first-third max + 2; every completed cycle "
      "exactly 100 notifications in order; a complete cycle after every restart.\n")
print("**verdict: PASS**" if not failures else "**verdict: FAIL** — " + "; ".join(failures))
sys.exit(0 if not failures else 1)
