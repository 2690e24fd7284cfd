#!/usr/bin/env bash
# What tracing costs, by CPU per request, and what a dead collector does under load.
#
# paired (default): two daemons of one build, paired on core 1 in front of one nginx
# origin serving bench_payloads' JSON. A: no `tracing`. B: `tracing: { otlp, sample: 1.0 }`
# — every request sampled, its SERVER, CLIENT and serialize spans exported to
# bench/tracing_collector.py (on core 0, with wrk). Each daemon loaded by its own wrk -t1
# -c16 for SECONDS, ROUNDS times; prints B/A per round (CPU of the whole process, the
# exporter's thread included, over requests completed) and the spans the collector got.
#
# down: one daemon, `tracing` pointed at a port nothing listens on, loaded by wrk -c16 for
# SECONDS: wrk's errors and non-2xx answers, the daemon's RSS every 5 s, and its
# exported/dropped counters against the spans made.
#
#   bench/tracing.sh [paired] PAYLOAD SECONDS ROUNDS [BINARY]     e.g. small 5 6
#   bench/tracing.sh down SECONDS [BINARY]                        e.g. 60
#
# Loopback only; every process it starts is stopped by PID; every load bounded by -d.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=paired
[ "${1:-}" = paired ] && shift
[ "${1:-}" = down ] && { MODE=down; shift; }
. bench/paired.sh
if [ "$MODE" = paired ]; then
  [ $# -ge 3 ] || { sed -n '2,19p' "$0"; exit 2; }
  PAYLOAD=$1; SECONDS_PER_ROUND=$2; ROUNDS=$3; BIN=${4:-.build/release/serializerd}
else
  [ $# -ge 1 ] || { sed -n '2,19p' "$0"; exit 2; }
  PAYLOAD=small; SECONDS_PER_ROUND=$1; BIN=${2:-.build/release/serializerd}
fi
paired_scratch
ORIGIN=28183 COLLECTOR=28187
mkdir -p "$scratch/www"
chmod 755 "$scratch" "$scratch/www"   # nginx's workers read it as nobody
# bench_payloads' 1 KB document (its larger ones take a minute to make and are not used here).
python3 - "$scratch/www" "$PAYLOAD" <<'PY'
import json, random, sys
random.seed(7)
size = {"small": 1_000, "medium": 100_000}[sys.argv[2]]
def item(i):
    return {"id": i, "name": f"item {i}", "price": round(random.random() * 100, 2), "tags": ["a", "b", "c"][: i % 4],
            "active": i % 2 == 0, "note": None, "text": "lorem ipsum dolor sit amet \u00e9\u00e8 " * (i % 3)}
items = []
while len(json.dumps({"items": items}, indent=1)) < size:
    items.append(item(len(items)))
open(f"{sys.argv[1]}/{sys.argv[2]}.json", "w").write(json.dumps({"items": items}, indent=1))
PY
paired_origin "$ORIGIN" "$scratch/www"
config() {  # PORT [TRACING]
  printf 'listen: 127.0.0.1:%s\nworkers: 1\nlog: { level: error }\n%sroutes:\n  - name: bench\n    match: { prefix: /bench/ }\n    upstream: http://127.0.0.1:%s/\n' \
    "$1" "${2:+tracing: $2
}" "$ORIGIN"
}

if [ "$MODE" = paired ]; then
  taskset -c 0 python3 bench/tracing_collector.py "$COLLECTOR" & PIDS+=($!)
  config 28185 > "$scratch/a.yaml"
  config 28195 "{ otlp: http://127.0.0.1:$COLLECTOR/v1/traces, sample: 1.0 }" > "$scratch/b.yaml"
  paired_daemons "$BIN" "$BIN" "$PAYLOAD"
  for port in 28185 28195; do
    code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/bench/$PAYLOAD.json")
    [ "$code" = 200 ] || { echo "the daemon on $port answers $code, not 200" >&2; exit 1; }
  done
  paired_rounds "$SECONDS_PER_ROUND" "$ROUNDS" off traced "$PAYLOAD"
  sleep 2   # the last batch (the exporter sends each second)
  echo "collector: $(curl -s "http://127.0.0.1:$COLLECTOR/")"
  curl -s http://127.0.0.1:28195/metrics | grep -E '^serializerd_spans_(exported|dropped)_total'
  exit 0
fi

# down: nothing listens on the collector's port.
config 28195 "{ otlp: http://127.0.0.1:$COLLECTOR/v1/traces, sample: 1.0 }" > "$scratch/b.yaml"
taskset -c 1 "$BIN" serve --config "$scratch/b.yaml" >"$scratch/b.log" 2>&1 & BP=$!; PIDS+=($BP)
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:28195/bench/small.json" && break; sleep 0.1; done
curl -sf -o /dev/null "http://127.0.0.1:28195/bench/small.json" || { echo "the daemon does not answer 200" >&2; exit 1; }
taskset -c 0 wrk -t1 -c16 -d"${SECONDS_PER_ROUND}s" "http://127.0.0.1:28195/bench/small.json" > "$scratch/wrk" & W_PID=$!
while kill -0 "$W_PID" 2>/dev/null; do
  echo "rss $(awk '/VmRSS/ {print $2, $3}' "/proc/$BP/status")"
  sleep 5
done
wait "$W_PID" || true
sleep 12   # batches in flight time out (10 s) and are counted
requests=$(awk '/requests in/ {print $1}' "$scratch/wrk")
echo "requests: $requests; wrk: $(grep -E 'Socket errors|Non-2xx' "$scratch/wrk" || echo 'no errors, no non-2xx')"
curl -s http://127.0.0.1:28195/metrics | grep -E '^serializerd_spans_(exported|dropped)_total|^serializerd_requests_total'
echo "rss after: $(awk '/VmRSS/ {print $2, $3}' "/proc/$BP/status")"
