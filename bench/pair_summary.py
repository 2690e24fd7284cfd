"""The table and per-round on/off ratios of `bench_concurrent_run` rows (bench/lib.sh).

    python3 bench/pair_summary.py RESULTS "off label" "on label" [NOTE]

Each row: on-req/s on-requests on-ticks off-req/s off-requests off-ticks [ERR].
A row with ERR (a non-2xx answer) fails the run.
"""
import os
import statistics
import sys

results, off_label, on_label = sys.argv[1:4]
note = sys.argv[4] if len(sys.argv) > 4 else ""
rows = [line.split() for line in open(results) if line.strip()]
if any("ERR" in r for r in rows):
    sys.exit("a run answered non-2xx: " + str(rows))
tck = os.sysconf("SC_CLK_TCK")


def med(xs):
    return f"{statistics.median(xs):,.1f} ({min(xs):,.1f}–{max(xs):,.1f})"


def ratio(xs):
    return f"**{statistics.median(xs):.3f}** ({min(xs):.3f}–{max(xs):.3f})"


on_rps, off_rps = [float(r[0]) for r in rows], [float(r[3]) for r in rows]
on_cpu = [int(r[2]) / tck * 1e6 / int(r[1]) for r in rows]
off_cpu = [int(r[5]) / tck * 1e6 / int(r[4]) for r in rows]
print("| daemon (both loaded at once) | req/s median (min–max) | daemon CPU µs per request median (min–max) |")
print("|---|---|---|")
print(f"| {off_label} | {med(off_rps)} | {med(off_cpu)} |")
print(f"| {on_label} | {med(on_rps)} | {med(on_cpu)} |")
cpu = [a / b for a, b in zip(on_cpu, off_cpu)]
rps = [a / b for a, b in zip(on_rps, off_rps)]
print(f"\non/off per round, median (min–max): daemon CPU per request {ratio(cpu)}, req/s {ratio(rps)}, "
      f"{len(rows)} rounds. {note}".rstrip())
