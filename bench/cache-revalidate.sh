#!/usr/bin/env bash
# What a revalidated cache entry costs against a full miss, by CPU per request.
#
# Two daemons of one build, paired on core 1 with an nginx origin that serves bench-peers'
# payloads with `Cache-Control: no-cache` (so every request finds its entry stale) and
# answers If-None-Match with 304. A: route `cache: { policy: reload }` — every request is
# a miss: forwarded, transcoded, stored. B: route `cache: { policy: protocol }` — every
# request revalidates, gets a 304 and sends the stored output without transcoding. Each is
# loaded by its own wrk -t1 -c16 on core 0 for SECONDS, ROUNDS times; prints B/A per
# round (CPU from /proc/PID/stat over requests completed) and the origin's 304 share.
#
#   bench/cache-revalidate.sh PAYLOAD SECONDS ROUNDS [BINARY]
#   bench/cache-revalidate.sh large 5 4
#
# Needs the payloads of one ../shared/bench-peers run (W, default /tmp/peerbench/www).
# Loopback only; every process it starts is stopped by PID.
set -euo pipefail
. "$(dirname "$0")/paired.sh"
paired_args "$0" 16 "$@"
paired_scratch
ORIGIN=28183
paired_origin "$ORIGIN" "$W/www" "add_header Cache-Control no-cache;"
for side in a b; do
  port=$([ $side = a ] && echo 28185 || echo 28195)
  policy=$([ $side = a ] && echo reload || echo protocol)
  printf 'listen: 127.0.0.1:%s\nworkers: 1\nlog: { level: error }\nroutes:\n  - name: bench\n    match: { prefix: /bench/ }\n    upstream: http://127.0.0.1:%s/\n    cache: { policy: %s }\n' \
    "$port" "$ORIGIN" "$policy" > "$scratch/$side.yaml"
done
paired_daemons "$BIN" "$BIN" "$PAYLOAD"
status=$(curl -s -D - -o /dev/null "http://127.0.0.1:28195/bench/$PAYLOAD.json" | tr -d '\r' | sed -n 's/^Cache-Status: //p')
[ "$status" = "serializerd; fwd=stale; fwd-status=304" ] || { echo "B is not revalidating: Cache-Status '$status'" >&2; exit 1; }
paired_rounds "$SECONDS_PER_ROUND" "$ROUNDS" miss revalidated "$PAYLOAD"
metrics=$(curl -s http://127.0.0.1:28195/metrics | grep -E 'serializerd_cache_requests_total\{route="bench",result="(revalidated|miss)"\}' | tr '\n' ' ')
echo "B: $metrics"
