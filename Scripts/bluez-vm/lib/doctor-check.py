#!/usr/bin/python3
"""doctor-check.py: checks `central-scanner --doctor --json` against what the VM's bluetoothd is.

usage: doctor-check.py FINDINGS.json EXIT VERSION EXPERIMENTAL(yes|no)

FINDINGS.json: the doctor's JSON lines; EXIT: its exit status; VERSION: the bluetoothd under test
(BLUEZ_VERSION); EXPERIMENTAL: whether it runs with -E. The guest sees the host's dpkg database,
whose bluez package is 5.66. Prints one line per failed expectation; exit 0 when none failed.
"""
import json
import re
import sys

path, exit_status, version, experimental = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "yes"
findings = {}
for line in open(path):
    event = json.loads(line)
    if event.get("event") == "finding":
        findings[event["check"]] = event
failures = []


def expect(condition, what):
    if not condition:
        failures.append(what)


def finding(check):
    f = findings.get(check)
    expect(f is not None, f"no {check} finding")
    return f or {"status": "?", "cause": "", "fix": ""}


def release(text):
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


expect(exit_status == 0, f"exit {exit_status}, 0 expected (no problem)")
for f in findings.values():
    expect(set(f) >= {"check", "status", "cause", "fix"}, f"{f.get('check')}: a field is missing")
    expect(f["status"] != "problem", f"{f['check']} is a problem: {f['cause']}")
for check in ("bluetoothd", "policy.call", "policy.agent", "adapters", "policy.advertisement", "policy.application"):
    expect(finding(check)["status"] == "ok", f"{check} not ok: {finding(check)['cause']}")
expect("2 adapters" in finding("adapters")["cause"], "adapters: 2 expected")
for hci in ("hci0", "hci1"):
    expect(finding(f"adapter {hci}")["status"] == "ok" and "powered" in finding(f"adapter {hci}")["cause"], f"{hci} not powered")
    expect(finding(f"advertising {hci}")["status"] == "ok", f"advertising {hci}: {finding(f'advertising {hci}')['cause']}")

# Experimental interfaces: monitors exist from 5.56, and only with -E.
x = finding("experimental")
if experimental:
    expect("ConnectDevice" in x["cause"], f"experimental (-E): no ConnectDevice in {x['cause']!r}")
    if release(version) >= (5, 56):
        expect(x["status"] == "ok" and "AdvertisementMonitorManager1 (passive scanning)" in x["cause"],
               f"experimental (-E, {version}): monitors expected: {x['cause']!r}")
    else:
        expect(x["status"] == "info" and "passive scanning is unavailable" in x["cause"],
               f"experimental (-E, {version}): no monitors expected, said: {x['cause']!r}")
else:
    expect(x["status"] == "info" and "Experimental = true" in x["fix"], f"experimental (no -E): {x}")

# main.conf: bluez-up appends [GATT] Channels = 1.
expect("Channels = 1" in finding("main.conf")["cause"], f"main.conf: {finding('main.conf')['cause']!r}")

# The version: the era the interfaces fit contains the release under test; the host's package is
# 5.66, so another release is a warning naming the mismatch.
v = finding("version")
m = re.search(r"BlueZ (\d+\.\d+)(?:–(\d+\.\d+)| or later)", v["cause"])
expect(m is not None, f"version: no era in {v['cause']!r}")
if m:
    low, high = release(m.group(1)), release(m.group(2)) if m.group(2) else (99, 99)
    expect(low <= release(version) <= high, f"version: era {m.group(0)} does not contain {version}")
    # 5.66-5.72 export PowerState only with -E: without it 5.55 and 5.66 look alike.
    package_fits = low <= (5, 66) <= high
    expect(v["status"] == ("info" if package_fits else "warning"), f"version ({version}, era {m.group(0)}): status {v['status']}")
    expect(version == "5.66" or not experimental or not package_fits, f"version ({version}, -E): the mismatch is not seen")
expect("bluez package 5.66" in v["cause"], f"version: no package in {v['cause']!r}")

for f in failures:
    print(f"doctor-check: {f}")
sys.exit(1 if failures else 0)
