#!/usr/bin/env bash
# Two serializerd builds compared by CPU per request, loaded at the same time: on these
# shared machines a build's CPU per request moves by ±30 % between runs a minute apart
# (nginx's with it), but two daemons on the same core under the same load see the same
# noise, so their ratio holds to about ±1 % (A against A: 1.002–1.010).
#
# Both pinned to core 1 with bench-peers' nginx origin, each loaded by its own wrk -t1 -c16
# on core 0 for SECONDS, ROUNDS times; CPU time from /proc/PID/stat over each round,
# divided by the requests that round completed. Prints B/A per round: below 1 is B cheaper.
# (Per-request CPU is higher than in bench-peers, where one daemon has the core.)
#
#   bench/paired-cpu.sh PAYLOAD SECONDS ROUNDS BINARY_A BINARY_B
#   bench/paired-cpu.sh medium 5 4 /tmp/old/serializerd .build/release/serializerd
#
# Needs the scratch directory of one ../shared/bench-peers run (W, default /tmp/peerbench:
# the origin's nginx config and the payloads small/medium/large.json). Loopback only; every
# process it starts is stopped by PID.
set -euo pipefail
. "$(dirname "$0")/paired.sh"
[ $# -eq 5 ] || { sed -n '2,17p' "$0"; exit 2; }
PAYLOAD=$1; SECONDS_PER_ROUND=$2; ROUNDS=$3; A=$4; B=$5
W=${W:-/tmp/peerbench}
[ -f "$W/nginx/origin.conf" ] && [ -f "$W/serializerd.yaml" ] || { echo "no bench-peers scratch in $W: run ../shared/bench-peers/run.sh once" >&2; exit 1; }
origin_port=$(sed -n 's/.*upstream: http:\/\/127.0.0.1:\([0-9]*\)\/.*/\1/p' "$W/serializerd.yaml")
paired_scratch
for side in a b; do
  port=$([ $side = a ] && echo 28185 || echo 28195)
  sed "s/^listen: .*/listen: 127.0.0.1:$port/" "$W/serializerd.yaml" > "$scratch/$side.yaml"
done
taskset -c 1 nginx -p "$W/nginx" -c "$W/nginx/origin.conf" -g 'daemon off;' >"$scratch/origin.log" 2>&1 & PIDS+=($!)
paired_daemons "$A" "$B" "$PAYLOAD"
curl -sf -o /dev/null "http://127.0.0.1:$origin_port/$PAYLOAD.json" || { echo "origin not answering" >&2; exit 1; }
paired_rounds "$SECONDS_PER_ROUND" "$ROUNDS" A B "$PAYLOAD"
