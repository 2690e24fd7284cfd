#!/usr/bin/env bash
# What telemetry costs: two serializerd instances in front of the same nginx origin, on
# loopback only, both with the same 50 routes.
#   on:  JSON request logs (to a file), one /-/events subscriber reading everything,
#        metrics (always on)
#   off: log.level error (no request lines), no subscriber, metrics (always on)
# Both daemons are pinned to core 1, wrk to core 0; runs alternate off/on and repeat;
# medians and the on/off ratio are reported. Then the /metrics scrape at 50 routes is
# timed with every route's series populated. Every load run is bounded by wrk's -d.
#
#   bench/telemetry.sh              # REPS=5 DUR=5s CONNS=32
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

REPS=${REPS:-5}
DUR=${DUR:-5s}
CONNS=${CONNS:-32}
WORK=${WORK:-/tmp/serializerd-bench-telemetry}
ORIGIN=18091 ON=18094 OFF=18095

bench_start "$WORK" "nginx-light wrk util-linux python3 curl" nginx wrk taskset python3 curl

python3 - "$WORK/www" <<'EOF'
import json, sys
items, data = [], b""
while len(data) < 1000:
    items.append({"id": len(items), "name": f"item {len(items)}", "active": True, "note": None})
    data = json.dumps({"items": items}, indent=1).encode()
open(f"{sys.argv[1]}/small.json", "wb").write(data)
EOF

{ nginx_preamble "$WORK"; cat <<EOF
  server { listen 127.0.0.1:$ORIGIN; root $WORK/www; }
}
EOF
} > "$WORK/nginx.conf"

config() {  # port level
  echo "listen: 127.0.0.1:$1"
  echo "workers: 1"
  echo "log: { format: json, level: $2 }"
  echo "routes:"
  for i in $(seq 0 49); do
    echo "  - name: route$i"
    echo "    match: { prefix: /r$i/ }"
    echo "    upstream: http://127.0.0.1:$ORIGIN/"
  done
}
config "$ON" info > "$WORK/on.yaml"
config "$OFF" error > "$WORK/off.yaml"

taskset -c 1 nginx -c "$WORK/nginx.conf"
taskset -c 1 "$BIN" serve --config "$WORK/on.yaml" > "$WORK/logs/on.log" 2>&1 &
ON_PID=$!
taskset -c 1 "$BIN" serve --config "$WORK/off.yaml" > "$WORK/logs/off.log" 2>&1 &
OFF_PID=$!
SSE_PID=""
cleanup() {
  kill "$ON_PID" "$OFF_PID" ${SSE_PID:+"$SSE_PID"} 2>/dev/null || true
  kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
}
trap cleanup EXIT
for port in $ON $OFF; do
  for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port/r0/small.json" >/dev/null 2>&1 && break; sleep 0.1; done
done
# The subscriber reads every event (as a devtools-style viewer would), on the wrk core.
taskset -c 0 curl -sN "http://127.0.0.1:$ON/-/events" > "$WORK/events.txt" &
SSE_PID=$!
sleep 0.5

run() {  # port → req/s
  taskset -c 0 wrk -t1 -c"$CONNS" -d"$DUR" "http://127.0.0.1:$1/r7/small.json" 2>/dev/null \
    | awk '/Requests\/sec/ {print $2} /Non-2xx/ {print "ERR", $NF}'
}

RESULTS="$WORK/results.txt"
: > "$RESULTS"
for rep in $(seq "$REPS"); do
  echo "off $rep $(run "$OFF" | tr '\n' ' ')" >> "$RESULTS"
  echo "on $rep $(run "$ON" | tr '\n' ' ')" >> "$RESULTS"
done

# Populate every route's series (ok and an unacceptable 404), then time the scrape.
for i in $(seq 0 49); do
  curl -fs "http://127.0.0.1:$ON/r$i/small.json" >/dev/null
  curl -s "http://127.0.0.1:$ON/r$i/missing.json" >/dev/null
done
# One kept-alive connection, as Prometheus scrapes: wrk's latency percentiles.
SCRAPE_LATENCY=$(taskset -c 0 wrk -t1 -c1 -d3s --latency "http://127.0.0.1:$ON/metrics" 2>/dev/null \
  | awk '$1 == "50%" || $1 == "90%" || $1 == "99%" {printf "%s %s ", $1, $2} /Requests\/sec/ {printf "rps %s", $2}')
curl -s "http://127.0.0.1:$ON/metrics" > "$WORK/metrics.txt"
PROMTOOL=$(command -v promtool || true)

python3 - "$RESULTS" "$SCRAPE_LATENCY" "$WORK/events.txt" "$WORK/logs/on.log" "$WORK/metrics.txt" "${PROMTOOL:-}" <<'EOF'
import statistics, subprocess, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
errors = [r for r in rows if "ERR" in r]
off = [float(r[2]) for r in rows if r[0] == "off"]
on = [float(r[2]) for r in rows if r[0] == "on"]
pairs = [b / a for a, b in zip(off, on)]
print("| telemetry | req/s median (min–max) |")
print("|---|---|")
print(f"| off (no request logs, no subscriber) | {statistics.median(off):,.0f} ({min(off):,.0f}–{max(off):,.0f}) |")
print(f"| on (JSON logs, 1 SSE subscriber, metrics) | {statistics.median(on):,.0f} ({min(on):,.0f}–{max(on):,.0f}) |")
print(f"\non/off ratio: **{statistics.median(on) / statistics.median(off):.3f}** (medians); per alternating pair: "
      + ", ".join(f"{p:.3f}" for p in pairs) + f"; median of pairs {statistics.median(pairs):.3f}")
import os
print(f"/metrics at 50 routes: {os.path.getsize(sys.argv[5]):,} bytes, {sum(1 for l in open(sys.argv[5]) if not l.startswith('#')):,} series lines; "
      f"scrape latency on one kept-alive connection (wrk): {sys.argv[2]}")
events = sum(1 for l in open(sys.argv[3]) if l.startswith("event: request_completed"))
lines = sum(1 for l in open(sys.argv[4]) if '"msg":"request_completed"' in l)
print(f"request_completed lines logged by 'on': {lines:,}; events the subscriber received: {events:,}; non-2xx runs: {len(errors)}")
if sys.argv[6]:
    check = subprocess.run([sys.argv[6], "check", "metrics"], stdin=open(sys.argv[5]), capture_output=True, text=True)
    print(f"promtool check metrics: {'clean' if check.returncode == 0 else check.stdout + check.stderr}")
EOF
