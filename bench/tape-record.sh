#!/usr/bin/env bash
# What recording costs: CPU per request of a route forwarding (A) against the same route
# with `tape: { mode: record }` (B), both daemons loaded at once on core 1 (as
# bench/paired-cpu.sh does, so both see the same noise), each by its own wrk -t1 -c16 on
# core 0. Each round starts both daemons afresh with an empty tape, so a round records at
# most SECONDS of traffic (a tape holds at most 256 MiB: keep SECONDS × rate × payload
# under it, or B stops recording part way, which the line reports). CPU time of each
# daemon (the tape writer thread included) from /proc/PID/stat, over the round, divided
# by the requests it completed. Prints B/A per round.
#
#   bench/tape-record.sh PAYLOAD SECONDS ROUNDS [BINARY]
#   bench/tape-record.sh small 5 5
#   bench/tape-record.sh medium 1 5
#
# Needs the scratch directory of one ../shared/bench-peers run (W, default /tmp/peerbench).
# Loopback only; every process it starts is stopped by PID.
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,17p' "$0"; exit 2; }
PAYLOAD=$1; SECONDS_PER_ROUND=$2; ROUNDS=$3; BIN=${4:-.build/release/serializerd}
W=${W:-/tmp/peerbench}
[ -f "$W/nginx/origin.conf" ] && [ -f "$W/serializerd.yaml" ] || { echo "no bench-peers scratch in $W: run ../shared/bench-peers/run.sh once" >&2; exit 1; }
origin_port=$(sed -n 's/.*upstream: http:\/\/127.0.0.1:\([0-9]*\)\/.*/\1/p' "$W/serializerd.yaml")
scratch=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$scratch"; }
trap cleanup EXIT
taskset -c 1 nginx -p "$W/nginx" -c "$W/nginx/origin.conf" -g 'daemon off;' >"$scratch/origin.log" 2>&1 & PIDS+=($!)
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$origin_port/$PAYLOAD.json" && break; sleep 0.1; done
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
for r in $(seq "$ROUNDS"); do
  rm -rf "$scratch/tapes"; mkdir "$scratch/tapes"
  sed "s/^listen: .*/listen: 127.0.0.1:28185/" "$W/serializerd.yaml" > "$scratch/a.yaml"
  { sed "s/^listen: .*/listen: 127.0.0.1:28195/" "$W/serializerd.yaml"; echo "    tape: { mode: record }"; } > "$scratch/b.yaml"
  sed -i "1i tapes: { dir: $scratch/tapes }" "$scratch/b.yaml"
  taskset -c 1 "$BIN" serve --config "$scratch/a.yaml" >"$scratch/a.log" 2>&1 & AP=$!; PIDS+=($AP)
  taskset -c 1 "$BIN" serve --config "$scratch/b.yaml" >"$scratch/b.log" 2>&1 & BP=$!; PIDS+=($BP)
  for port in 28185 28195; do
    for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/bench/$PAYLOAD.json" && break; sleep 0.1; done
  done
  a0=$(cpu $AP); b0=$(cpu $BP)
  taskset -c 0 wrk -t1 -c16 -d"${SECONDS_PER_ROUND}s" "http://127.0.0.1:28185/bench/$PAYLOAD.json" > "$scratch/wa" & WA=$!
  taskset -c 0 wrk -t1 -c16 -d"${SECONDS_PER_ROUND}s" "http://127.0.0.1:28195/bench/$PAYLOAD.json" > "$scratch/wb"
  wait $WA
  # The writer's last pass is part of recording's cost: wait until the tape is written.
  for _ in $(seq 50); do [ -s "$scratch/tapes/bench.har" ] && [ -z "$(find "$scratch/tapes" -name '*.tmp-*')" ] && break; sleep 0.2; done
  sleep 1.5   # the writer's pass after the last recording (within a second of it)
  a1=$(cpu $AP); b1=$(cpu $BP)
  entries=$(curl -s "http://127.0.0.1:28195/-/tapes" | python3 -c 'import json,sys; t=json.load(sys.stdin)["tapes"][0]; print(t["entries"], t.get("recording_stopped", ""))')
  kill $AP $BP; wait $AP $BP 2>/dev/null || true
  python3 - "$r" "$a0" "$a1" "$b0" "$b1" "$(getconf CLK_TCK)" \
    "$(awk '/requests in/{print $1}' "$scratch/wa")" "$(awk '/requests in/{print $1}' "$scratch/wb")" "$entries" <<'PY'
import sys
r, a0, a1, b0, b1, tick, ra, rb, entries = sys.argv[1:]
a = (float(a1) - float(a0)) / float(tick) * 1e6 / int(ra)
b = (float(b1) - float(b0)) / float(tick) * 1e6 / int(rb)
print(f"round {r}: forward {a:.1f} us/req, record {b:.1f} us/req, record/forward {b / a:.3f}  ({ra} and {rb} requests; tape: {entries})")
PY
done
