"""Results -> chart (PNG) and the table of BENCHMARKS.md (between the results markers)."""
import os

BEGIN = "<!-- results:begin -->"
END = "<!-- results:end -->"


def _fmt(x, digits=2):
    if x is None:
        return "n/a"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.{digits}f}"


def _ratio(entry, metric):
    s = entry.get(metric + "_ratio") if entry else None
    if not s:
        return "n/a"
    return f"**{s['median']:.2f}x** ({s['min']:.2f}–{s['max']:.2f})"


def _value(entry, metric, unit=""):
    s = entry.get(metric) if entry else None
    if not s:
        return "n/a"
    return f"{_fmt(s['median'])}{unit} ({_fmt(s['min'])}–{_fmt(s['max'])})"


def rows(results):
    """(workload, peer, figure, value, ratio to baseline) rows of the table."""
    out = []
    w = results["workloads"]
    for label, block in (w.get("p1d") or {}).items():
        for peer, e in block["summary"].items():
            out.append((f"P1 {label}", peer, "notifications/s", _value(e, "rate"), _ratio(e, "rate")))
            out.append((f"P1 {label}", peer, "CPU µs / notification", _value(e, "cpu_us"), _ratio(e, "cpu_us")))
    for label, block in (w.get("p1") or {}).items():
        for peer, e in block["summary"].items():
            out.append((f"P1 forced StartNotify, {label}", peer, "notifications/s", _value(e, "rate"), _ratio(e, "rate")))
            out.append((f"P1 forced StartNotify, {label}", peer, "CPU µs / notification", _value(e, "cpu_us"), _ratio(e, "cpu_us")))
    for label, block in (w.get("p2") or {}).items():
        for peer, e in block["summary"].items():
            out.append((f"P2 read, {label}", peer, "reads/s", _value(e, "rate"), _ratio(e, "rate")))
            if "cpu_us" in e:
                out.append((f"P2 read, {label}", peer, "CPU µs / read", _value(e, "cpu_us"), _ratio(e, "cpu_us")))
            if "p50_us" in e:
                out.append((f"P2 read, {label}", peer, "latency p50 µs", _value(e, "p50_us"), _ratio(e, "p50_us")))
                out.append((f"P2 read, {label}", peer, "latency p99 µs", _value(e, "p99_us"), _ratio(e, "p99_us")))
    p3 = w.get("p3")
    if p3:
        label = f"P3 scan storm {p3['devices']}×{p3['hz']:g} Hz, {p3['seconds']:g} s"
        for peer, e in p3["summary"].items():
            out.append((label, peer, "CPU % of one core", _value(e, "cpu_pct", "%"), _ratio(e, "cpu_pct")))
            out.append((label, peer, "peak RSS MB", _value(e, "rss_mb"), _ratio(e, "rss_mb")))
            out.append((label, peer, "events/s received", _value(e, "events_per_s"), _ratio(e, "events_per_s")))
    for name, f in ((w.get("p4") or {}).get("figures") or {}).items():
        out.append(("P4 futures", "Futures", name + " (CPU ns)",
                    f"{_fmt(f['median_ns'])} ({_fmt(f['min_ns'])}–{_fmt(f['max_ns'])})",
                    f"**{f['ratio']:.2f}x** {f['baseline']} ({_fmt(f['baseline_median_ns'])} ns)"))
    return out


def write_markdown(results, path, json_rel, chart_rel, scale_chart_rel=None):
    m = results["machine"]
    lines = [BEGIN, "",
             f"Run of {results['date']} ({results['runs']} runs per figure; "
             f"{'quick' if results['settings'].get('quick') else 'full'} settings: "
             f"{results['settings']['notify_count']:,} notifications, {results['settings']['reads']:,} reads, "
             f"{results['settings']['scan_seconds']:g} s storm).",
             f"Machine: {m['cores']} cores, {m['cpu']}, Linux {m['kernel']}, {m.get('memory_gb')} GB; "
             f"load average before {results['load_before']}, after {results['load_after']} "
             f"(shared with other builds: absolute figures are noisy, same-run ratios are what count).",
             f"Raw data: `{json_rel}`.", ""]
    if chart_rel:
        lines += [f"![ratios to the C baseline]({chart_rel})", ""]
    lines += ["| workload | client | figure | median (min–max) | ratio to baseline, median (min–max) |",
              "|---|---|---|---|---|"]
    for r in rows(results):
        lines.append("| " + " | ".join(r) + " |")
    scale = results["workloads"].get("scale")
    if scale:
        from scale import scale_rows
        lines += ["", "Scale curve: CPU per event as devices grow (same total event rate at every size).", ""]
        if scale_chart_rel:
            lines += [f"![scale curve]({scale_chart_rel})", ""]
        lines += ["| workload | devices | client | CPU µs / event, median (min–max) | ratio to baseline | vs its 1-device cost |",
                  "|---|---|---|---|---|---|"]
        lines += ["| " + " | ".join(r) + " |" for r in scale_rows(scale)]
        from scale import scale_rss_rows
        rss = scale_rss_rows(scale)
        if rss:
            lines += ["", "P3 storm: each client's RSS per size, peak (VmHWM, as the client reports it) and at the end of the window (VmRSS).", "",
                      "| devices | client | peak RSS MB, median (min–max) | RSS MB at the end |", "|---|---|---|---|"]
            lines += ["| " + " | ".join(r) + " |" for r in rss]
    paced = results["workloads"].get("paced")
    if paced:
        from paced import paced_rows
        lines += ["", f"Paced notifications: every device notifying {paced['hz']:g} Hz (spread evenly), {paced['seconds']:g} s "
                  "per size; CPU per notification from the client's own getrusage, ratio to the C reference of the same "
                  "path and run (StartNotify: `baseline`, AcquireNotify: `baseline-acquire`).", "",
                  "| path | devices | client | CPU µs / notification, median (min–max) | ratio to C | vs its 1-device cost | lost (max) |",
                  "|---|---|---|---|---|---|---|"]
        lines += ["| " + " | ".join(r) + " |" for r in paced_rows(paced)]
    gw = results["workloads"].get("gateway")
    if gw:
        from gateway import gateway_rows
        lines += ["", "Gateway: one process with a CentralManager, a PeripheralManager, an Adapters list and a PairingAgent "
                  "(footprint), and a CentralManager scan with an Adapters scan of the same storm (scan pair); one "
                  "BluetoothSession against a session each, ratios to the same run's reference. Scan pair `gateway`: "
                  "the shared pair plus a PeripheralManager with a registered application and an advertisement on the "
                  "same session; `cpu_us` is per advertising report.", "",
                  "| workload | variant | figure | median (min–max) | ratio |", "|---|---|---|---|---|"]
        lines += ["| " + " | ".join(r) + " |" for r in gateway_rows(gw)]
    errors = []
    for key, block in results["workloads"].items():
        blocks = block.values() if key in ("p1d", "p1", "p2") else [block]
        if key == "paced":
            blocks = [b for k, path in block.items() if isinstance(path, dict) for b in path.values()]
        if key == "scale":
            blocks = [b for part in block.values() for b in part.values()]
        if key == "gateway":
            blocks = [{"errors": block.get("errors")}]
        for b in blocks:
            if isinstance(b, dict):
                for peer, e in (b.get("errors") or {}).items():
                    errors.append(f"- {key} {peer}: `{e.strip().splitlines()[-1][:200] if e.strip() else e}`")
    if errors:
        lines += ["", "Failures:", ""] + sorted(set(errors))
    lines += ["", END]
    text = "\n".join(lines)
    old = open(path).read() if os.path.exists(path) else ""
    if BEGIN in old and END in old:
        new = old.split(BEGIN)[0] + text + old.split(END, 1)[1]
    else:
        new = old + ("\n" if old else "") + text + "\n"
    with open(path, "w") as f:
        f.write(new)


def write_chart(results, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    w = results["workloads"]
    panels = []
    for label, block in (w.get("p1d") or {}).items():
        panels.append((f"P1 notifications/s, {label}", block["summary"], "rate"))
        panels.append((f"P1 CPU per notification, {label}", block["summary"], "cpu_us"))
    for label, block in (w.get("p1") or {}).items():
        panels.append((f"P1 notifications/s, {label}", block["summary"], "rate"))
        panels.append((f"P1 CPU per notification, {label}", block["summary"], "cpu_us"))
    for label, block in (w.get("p2") or {}).items():
        panels.append((f"P2 reads/s, {label}", block["summary"], "rate"))
    if w.get("p3"):
        panels.append(("P3 scan storm CPU %", w["p3"]["summary"], "cpu_pct"))
    if not panels:
        return None
    cols = 2
    rows_n = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows_n, cols, figsize=(12, 3.2 * rows_n), squeeze=False)
    for ax, (title, summary, metric) in zip(axes.flat, panels):
        names, med, lo, hi = [], [], [], []
        for peer, e in summary.items():
            s = e.get(metric + "_ratio")
            if not s:
                continue
            names.append(peer)
            med.append(s["median"])
            lo.append(s["median"] - s["min"])
            hi.append(s["max"] - s["median"])
        ax.barh(names, med, xerr=[lo, hi], color=["#888" if n.startswith("baseline") else "#3b7dd8" if n.startswith("bluecap")
                                                   else "#d8873b" for n in names])
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_title(title + " (× baseline)", fontsize=9)
        ax.tick_params(labelsize=8)
        ax.invert_yaxis()
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    m = results["machine"]
    fig.suptitle(f"bluecap-bench {results['date']}: ratio to the C libdbus baseline, median and min–max of "
                 f"{results['runs']} runs ({m['cores']} cores, {m['cpu']}, load {results['load_before'][0]})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
