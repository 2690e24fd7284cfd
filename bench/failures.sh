#!/usr/bin/env bash
# What keeping failure evidence costs the success path: two serializerd instances in
# front of the same nginx origin on loopback, the same config but admin.keep_failures
# (on: true, the default; off: false). Both serve 100 KB JSON successes; runs alternate
# off/on and repeat. Reported: req/s and CPU µs per request (utime+stime from /proc around
# each run) with medians and the on/off ratios. Both daemons are pinned to core 1, wrk to
# core 0; every load run is bounded by wrk's -d.
#
#   bench/failures.sh              # REPS=5 DUR=5s CONNS=32
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

REPS=${REPS:-5}
DUR=${DUR:-5s}
CONNS=${CONNS:-32}
WORK=${WORK:-/tmp/serializerd-bench-failures}
ORIGIN=18101 ON=18104 OFF=18105

bench_start "$WORK" "nginx-light wrk util-linux python3 curl" nginx wrk taskset python3 curl
bench_payloads "$WORK/www"
bench_config "$ON" "$ORIGIN" > "$WORK/on.yaml"
{ bench_config "$OFF" "$ORIGIN"; echo "admin: { keep_failures: false }"; } > "$WORK/off.yaml"
trap bench_stop_pair EXIT
bench_start_pair /bench/medium.json

RESULTS="$WORK/results.txt"
: > "$RESULTS"
for _ in $(seq "$REPS"); do
  echo "off $(bench_measured_run "$OFF_PID" "http://127.0.0.1:$OFF/bench/medium.json")" >> "$RESULTS"
  echo "on $(bench_measured_run "$ON_PID" "http://127.0.0.1:$ON/bench/medium.json")" >> "$RESULTS"
done
curl -s "http://127.0.0.1:$ON/-/failures" > "$WORK/failures.json"

python3 - "$RESULTS" "$(getconf CLK_TCK)" "$WORK/failures.json" <<'PY'
import json, statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
tck = float(sys.argv[2])
def side(name):
    rs = [r for r in rows if r[0] == name]
    rps = [float(r[1]) for r in rs]
    cpu = [int(r[3]) / tck * 1e6 / int(r[2]) for r in rs]
    return rps, cpu
off_rps, off_cpu = side("off")
on_rps, on_cpu = side("on")
print("| keep_failures | req/s median (min–max) | CPU µs per request median (min–max) |")
print("|---|---|---|")
for label, rps, cpu in [("false", off_rps, off_cpu), ("true (default)", on_rps, on_cpu)]:
    print(f"| {label} | {statistics.median(rps):,.0f} ({min(rps):,.0f}–{max(rps):,.0f}) | {statistics.median(cpu):.1f} ({min(cpu):.1f}–{max(cpu):.1f}) |")
print(f"\non/off: req/s {statistics.median(on_rps) / statistics.median(off_rps):.3f}, CPU per request "
      f"{statistics.median(on_cpu) / statistics.median(off_cpu):.3f} (medians); non-2xx runs: {sum('ERR' in r for r in rows)}; "
      f"failures kept by 'on': {len(json.load(open(sys.argv[3]))['failures'])}")
PY
