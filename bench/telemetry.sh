#!/usr/bin/env bash
# What telemetry costs: two serializerd instances in front of the same nginx origin, on
# loopback only, both with the same 50 routes.
#   on:  JSON request logs (to a file), one /-/events subscriber reading everything,
#        metrics (always on)
#   off: log.level error (no request lines), no subscriber, metrics (always on)
# Both daemons are pinned to core 1, wrk to core 0; each round loads both at once and
# measures both over the same interval (bench_concurrent_run); per-round on/off ratios
# are reported. Then the /metrics scrape at 50 routes is
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

RESULTS="$WORK/results.txt"
: > "$RESULTS"
for _ in $(seq "$REPS"); do
  bench_concurrent_run "http://127.0.0.1:$ON/r7/small.json" "http://127.0.0.1:$OFF/r7/small.json" >> "$RESULTS"
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

python3 bench/pair_summary.py "$RESULTS" "off (no request logs, no subscriber)" "on (JSON logs, 1 SSE subscriber, metrics)"
python3 - "$SCRAPE_LATENCY" "$WORK/events.txt" "$WORK/logs/on.log" "$WORK/metrics.txt" "${PROMTOOL:-}" <<'EOF'
import os, subprocess, sys
latency, events_file, log_file, metrics_file, promtool = sys.argv[1:6]
print(f"/metrics at 50 routes: {os.path.getsize(metrics_file):,} bytes, {sum(1 for l in open(metrics_file) if not l.startswith('#')):,} series lines; "
      f"scrape latency on one kept-alive connection (wrk): {latency}")
events = sum(1 for l in open(events_file) if l.startswith("event: request_completed"))
lines = sum(1 for l in open(log_file) if '"msg":"request_completed"' in l)
print(f"request_completed lines logged by 'on': {lines:,}; events the subscriber received: {events:,}")
if promtool:
    check = subprocess.run([promtool, "check", "metrics"], stdin=open(metrics_file), capture_output=True, text=True)
    print(f"promtool check metrics: {'clean' if check.returncode == 0 else check.stdout + check.stderr}")
EOF
