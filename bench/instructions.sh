#!/usr/bin/env bash
# Instructions per request, counted by valgrind's callgrind: deterministic where wall-clock
# figures on these shared machines move by ±20–40 %, so a change of a few percent in the
# request path shows up in one run. User space only (the kernel's share is not counted).
#
# Three proxies in front of the same nginx origin, on loopback only, one connection
# (wrk -c1, bounded by -d):
#   serializerd   release build (debug info stripped: valgrind cannot read Swift's)
#   C             bench/reference/evcurl_proxy.c, bodies passed through
#   C+options     the same with the libcurl options serializerd sets on every task
# For each body size: warm up, zero the counters, count DUR of requests, and report
# instructions per request by shared object, with serializerd ÷ C+options.
#
#   bench/instructions.sh            # SIZES="small medium" DUR=4s
#   BEFORE=/tmp/old-serializerd PROXIES="serializerd before" bench/instructions.sh
#                                    # a change against an earlier build, same machine
#   PROXIES="serializerd-cache before-cache"   # cache hits (a route with `cache:`)
#   PROXIES="serializerd serializerd-drift"    # drift learning on (`contract: {drift: true}`)
#   PROXIES="serializerd serializerd-limits"   # `limits: { concurrency, rate }` that never bind
#   PROXIES="serializerd serializerd-traced"   # `tracing` with every request sampled, to a
#                                              # collector (bench/tracing_collector.py); the
#                                              # exporter's thread is counted too
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

SIZES=${SIZES:-small medium}
DUR=${DUR:-4s}
WORK=${WORK:-/tmp/serializerd-instructions}
ORIGIN=18181 PORT=18184

bench_start "$WORK" "nginx-light wrk valgrind gcc python3 curl binutils" nginx wrk valgrind callgrind_control gcc python3 curl strip
bench_payloads "$WORK/www"
strip --strip-debug -o "$WORK/serializerd" "$BIN"
PROXIES=${PROXIES:-serializerd C C+options}
[ -z "${BEFORE:-}" ] || strip --strip-debug -o "$WORK/before" "$BEFORE"
bench_build_reference "$WORK/evcurl_proxy"

{ nginx_preamble "$WORK"; cat <<EOF
  server { listen 127.0.0.1:$ORIGIN; root $WORK/www; }
}
EOF
} > "$WORK/nginx.conf"
{ bench_config "$PORT" "$ORIGIN"; bench_route cached /cached/ "$ORIGIN" "cache: { policy: prefer_cache }"; } > "$WORK/serializerd.yaml"
# The same file with drift learning on the first route: the same route found the same
# way, so the difference is the learning alone.
{ bench_config "$PORT" "$ORIGIN"; echo "    contract: { drift: true }"; bench_route cached /cached/ "$ORIGIN" "cache: { policy: prefer_cache }"; } > "$WORK/serializerd-drift.yaml"
# And with limits that never bind (the bench's one connection): the queue's cost alone.
{ bench_config "$PORT" "$ORIGIN"; echo "    limits: { concurrency: 64, rate: 100000/s }"; bench_route cached /cached/ "$ORIGIN" "cache: { policy: prefer_cache }"; } > "$WORK/serializerd-limits.yaml"

# And with every request traced, its spans exported to a local collector.
COLLECTOR=18186
{ bench_config "$PORT" "$ORIGIN" | sed "1a tracing: { otlp: http://127.0.0.1:$COLLECTOR/v1/traces, sample: 1.0 }"; bench_route cached /cached/ "$ORIGIN" "cache: { policy: prefer_cache }"; } > "$WORK/serializerd-traced.yaml"

nginx -c "$WORK/nginx.conf"
VG="" COLLECTOR_PID=""
case " $PROXIES " in *-traced*) python3 bench/tracing_collector.py "$COLLECTOR" & COLLECTOR_PID=$! ;; esac
cleanup() {
  [ -z "$COLLECTOR_PID" ] || kill "$COLLECTOR_PID" 2>/dev/null || true
  [ -z "$VG" ] || kill "$VG" 2>/dev/null || true
  kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
}
trap cleanup EXIT

# count NAME SIZE URL_PREFIX COMMAND... → appends "NAME SIZE OBJECT INSTRUCTIONS_PER_REQUEST" rows
count() {
  local name=$1 size=$2 prefix=$3; shift 3
  rm -f "$WORK/cg.out"*
  valgrind --tool=callgrind --compress-strings=no --compress-pos=no --callgrind-out-file="$WORK/cg.out" "$@" \
    > "$WORK/logs/$name-$size.log" 2>&1 &
  VG=$!
  for _ in $(seq 150); do curl -fs -o /dev/null "$prefix/$size.json" && break; sleep 0.2; done
  wrk -t1 -c1 -d2s "$prefix/$size.json" > /dev/null
  callgrind_control -z "$VG" > /dev/null 2>&1
  local n
  n=$(wrk -t1 -c1 -d"$DUR" "$prefix/$size.json" | awk '/requests in/ {print $1}')
  callgrind_control -d "$VG" > /dev/null 2>&1
  for _ in $(seq 50); do [ -s "$WORK/cg.out.1" ] && break; sleep 0.2; done
  kill "$VG"; wait "$VG" 2>/dev/null || true; VG=""
  python3 - "$WORK/cg.out.1" "$n" "$name" "$size" >> "$WORK/results.tsv" <<'EOF'
import collections, sys
objects = collections.Counter(); ob = None; calls = False
for line in open(sys.argv[1]):
    if line.startswith("ob="):
        ob = line[3:].strip().rsplit("/", 1)[-1]
    elif line.startswith("calls="):
        calls = True        # the next cost line is a callee's, not this function's own
    elif line[:1].isdigit() or line[:1] in "+-*":
        if calls:
            calls = False
        elif len(line.split()) > 1:
            objects[ob] += int(line.split()[1])
n = int(sys.argv[2])
for ob, cost in objects.items():
    label = "own" if ob in ("serializerd", "before", "evcurl_proxy") else ob.split(".so")[0].split("-")[0] if ".so" in ob else "other"
    label = label if label in ("own", "libcurl", "libc", "libevent") else "other"
    print(sys.argv[3], sys.argv[4], label, round(cost / n))
EOF
}

: > "$WORK/results.tsv"
for size in $SIZES; do
  for proxy in $PROXIES; do
    case $proxy in
      serializerd|before) count "$proxy" "$size" "http://127.0.0.1:$PORT/bench" "$WORK/$proxy" serve --config "$WORK/serializerd.yaml" ;;
      # Cache hits of the normalized output (every request after the first).
      serializerd-cache|before-cache)
        count "$proxy" "$size" "http://127.0.0.1:$PORT/cached" "$WORK/${proxy%-cache}" serve --config "$WORK/serializerd.yaml" ;;
      # The same answers with drift learning on.
      serializerd-drift|before-drift)
        count "$proxy" "$size" "http://127.0.0.1:$PORT/bench" "$WORK/${proxy%-drift}" serve --config "$WORK/serializerd-drift.yaml" ;;
      # The same answers through `limits: { concurrency, rate }` that never bind.
      serializerd-limits|before-limits)
        count "$proxy" "$size" "http://127.0.0.1:$PORT/bench" "$WORK/${proxy%-limits}" serve --config "$WORK/serializerd-limits.yaml" ;;
      # Every request traced and exported.
      serializerd-traced|before-traced)
        count "$proxy" "$size" "http://127.0.0.1:$PORT/bench" "$WORK/${proxy%-traced}" serve --config "$WORK/serializerd-traced.yaml" ;;
      C) count C "$size" "http://127.0.0.1:$PORT" "$WORK/evcurl_proxy" "$PORT" "http://127.0.0.1:$ORIGIN" ;;
      C+options) count C+options "$size" "http://127.0.0.1:$PORT" "$WORK/evcurl_proxy" "$PORT" "http://127.0.0.1:$ORIGIN" --serializerd-options ;;
    esac
  done
done

python3 - "$WORK/results.tsv" <<'EOF'
import collections, sys
rows = collections.defaultdict(collections.Counter)
for line in open(sys.argv[1]):
    name, size, label, value = line.split()
    rows[(name, size)][label] += int(value)
labels = ["own", "libcurl", "libc", "libevent", "other"]
names = list(dict.fromkeys(n for n, _ in rows))
reference = "C+options" if "C+options" in names else names[-1]
print("| body | proxy | instructions per request | own code (incl. Swift runtime) | libcurl | libc | libevent | other | ÷ " + reference + " |")
print("|---|---|---|" + "---|" * len(labels) + "---|")
for size in dict.fromkeys(s for _, s in rows):
    base = sum(rows[(reference, size)].values())
    for name in names:
        r = rows[(name, size)]
        total = sum(r.values())
        print(f"| {size} | {name} | {total:,} | " + " | ".join(f"{r[l]:,}" for l in labels) + f" | {total / base:.3f}× |")
EOF
