#!/usr/bin/env bash
# serializerd vs nginx as a reverse proxy, in front of the same nginx origin, on
# loopback only. Layout: origin and proxy pinned to core 1, wrk to core 0. Runs are
# interleaved (nginx proxy, serializerd, …) and repeated; medians are reported with
# ratios. Every load run is bounded by wrk's -d.
#
#   bench/proxy.sh                 # REPS=3 DUR=5s, sizes 1KB 100KB 1MB + XML
#   REPS=5 DUR=10s bench/proxy.sh
#   SOAK=300 bench/proxy.sh        # then 256 connections on 100 KB for 300 s, RSS every 30 s
#   EVCURL=0 bench/proxy.sh        # without the C reference (bench/reference/evcurl_proxy.c,
#                                  # the same libevent+libcurl stack passing bodies through;
#                                  # built with gcc when it is there)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

REPS=${REPS:-3}
DUR=${DUR:-5s}
CONNS=${CONNS:-32}
WORK=${WORK:-/tmp/serializerd-bench}
ORIGIN=18081 PROXY=18082 SERIALIZERD=18084 EVCURL_PORT=18085

bench_start "$WORK" "nginx-light wrk util-linux python3" nginx wrk taskset python3
bench_payloads "$WORK/www"

{ nginx_preamble "$WORK"; cat <<EOF
  upstream origin { server 127.0.0.1:$ORIGIN; keepalive 64; }
  server { listen 127.0.0.1:$ORIGIN; root $WORK/www; }
  server {
    listen 127.0.0.1:$PROXY;
    location /bench/ {
      proxy_pass http://origin/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffers 128 16k;
      proxy_max_temp_file_size 0;
    }
  }
}
EOF
} > "$WORK/nginx.conf"

{ bench_config "$SERIALIZERD" "$ORIGIN"; bench_route xml /xml/ "$ORIGIN" "response: { serializer: xml }"; } > "$WORK/serializerd.yaml"

# Cleanup is in place before anything starts, so a failed start leaves nothing running.
EVCURL_PID="" SPID=""
cleanup() {
  kill ${SPID:+"$SPID"} ${EVCURL_PID:+"$EVCURL_PID"} 2>/dev/null || true
  kill "$(cat "$WORK/nginx.pid" 2>/dev/null)" 2>/dev/null || true
}
trap cleanup EXIT
if [ "${EVCURL:-1}" = 1 ] && command -v gcc >/dev/null; then
  bench_build_reference "$WORK/evcurl_proxy"
  taskset -c 1 "$WORK/evcurl_proxy" "$EVCURL_PORT" "http://127.0.0.1:$ORIGIN" &
  EVCURL_PID=$!
fi
taskset -c 1 nginx -c "$WORK/nginx.conf"
taskset -c 1 "$BIN" serve --config "$WORK/serializerd.yaml" > "$WORK/logs/serializerd.log" 2>&1 &
SPID=$!
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$SERIALIZERD/bench/small.json" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs "http://127.0.0.1:$SERIALIZERD/bench/small.json" >/dev/null || { echo "serializerd did not start"; cat "$WORK/logs/serializerd.log"; exit 1; }
rss() { awk '/VmRSS/ {print $2}' "/proc/$SPID/status"; }
IDLE_RSS=$(rss)

# wrk → "req/s p50_ms p99_ms"
run() {
  taskset -c 0 wrk -t1 -c"$1" -d"$DUR" --latency "$2" 2>/dev/null | python3 -c '
import re, sys
t = sys.stdin.read()
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1))
def ms(label):
    m = re.search(r"\s" + label + r"%\s+([\d.]+)(us|ms|s)", t)
    v, u = float(m.group(1)), m.group(2)
    return v / 1000 if u == "us" else v * 1000 if u == "s" else v
errors = re.search(r"Non-2xx or 3xx responses: (\d+)", t)
p50, p99 = ms("50"), ms("99")
print(f"{rps:.0f} {p50:.3f} {p99:.3f} {errors.group(1) if errors else 0}")'
}

RESULTS="$WORK/results.tsv"
: > "$RESULTS"
for size in small medium large; do
  for rep in $(seq "$REPS"); do
    echo "nginx $size $rep $(run "$CONNS" "http://127.0.0.1:$PROXY/bench/$size.json")" >> "$RESULTS"
    echo "serializerd $size $rep $(run "$CONNS" "http://127.0.0.1:$SERIALIZERD/bench/$size.json")" >> "$RESULTS"
    [ -z "$EVCURL_PID" ] || echo "evcurl $size $rep $(run "$CONNS" "http://127.0.0.1:$EVCURL_PORT/$size.json")" >> "$RESULTS"
  done
done
PEAK_RSS=$(rss)
for rep in $(seq "$REPS"); do
  echo "serializerd xml $rep $(run "$CONNS" "http://127.0.0.1:$SERIALIZERD/xml/catalog.xml")" >> "$RESULTS"
  echo "direct c1 $rep $(run 1 "http://127.0.0.1:$ORIGIN/small.json")" >> "$RESULTS"
  echo "nginx c1 $rep $(run 1 "http://127.0.0.1:$PROXY/bench/small.json")" >> "$RESULTS"
  echo "serializerd c1 $rep $(run 1 "http://127.0.0.1:$SERIALIZERD/bench/small.json")" >> "$RESULTS"
  [ -z "$EVCURL_PID" ] || echo "evcurl c1 $rep $(run 1 "http://127.0.0.1:$EVCURL_PORT/small.json")" >> "$RESULTS"
done

if [ -n "${SOAK:-}" ]; then
  taskset -c 0 wrk -t1 -c256 -d"${SOAK}s" "http://127.0.0.1:$SERIALIZERD/bench/medium.json" > "$WORK/soak.txt" 2>&1 &
  WRK=$!
  SAMPLES=""
  for _ in $(seq $(( SOAK / 30 ))); do sleep 30; SAMPLES="$SAMPLES $(( $(rss) / 1024 ))"; done
  wait "$WRK" || true
  echo "soak: 256 connections, 100 KB, ${SOAK}s: $(grep Requests/sec "$WORK/soak.txt" | awk '{print $2}') req/s; RSS MiB every 30 s:$SAMPLES; $(grep -c 'Non-2xx' "$WORK/soak.txt") runs with non-2xx"
fi

python3 - "$RESULTS" "$IDLE_RSS" "$PEAK_RSS" "$WORK/www" <<'EOF'
import os, statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
def med(target, size, col):
    vals = [float(r[3 + col]) for r in rows if r[0] == target and r[1] == size]
    return statistics.median(vals), min(vals), max(vals)
size_bytes = {s: os.path.getsize(f"{sys.argv[4]}/{s}.json") for s in ["small", "medium", "large"]}
print(f"| body | nginx proxy req/s (min–max) | serializerd req/s (min–max) | ratio | nginx p50 / p99 ms | serializerd p50 / p99 ms |")
print("|---|---|---|---|---|---|")
for size in ["small", "medium", "large"]:
    n, s = med("nginx", size, 0), med("serializerd", size, 0)
    print(f"| {size} JSON ({size_bytes[size]:,} B) | {n[0]:,.0f} ({n[1]:,.0f}–{n[2]:,.0f}) | {s[0]:,.0f} ({s[1]:,.0f}–{s[2]:,.0f}) | "
          f"**{s[0] / n[0]:.2f}×** | {med('nginx', size, 1)[0]:.2f} / {med('nginx', size, 2)[0]:.2f} | "
          f"{med('serializerd', size, 1)[0]:.2f} / {med('serializerd', size, 2)[0]:.2f} |")
x = med("serializerd", "xml", 0)
print(f"| XML → JSON (100 KB) | — | {x[0]:,.0f} ({x[1]:,.0f}–{x[2]:,.0f}) | — | — | {med('serializerd', 'xml', 1)[0]:.2f} / {med('serializerd', 'xml', 2)[0]:.2f} |")
d, n1, s1 = med("direct", "c1", 1)[0], med("nginx", "c1", 1)[0], med("serializerd", "c1", 1)[0]
print(f"\nOne connection, 1 KB: p50 direct {d:.3f} ms, nginx proxy {n1:.3f} ms (+{n1 - d:.3f}), serializerd {s1:.3f} ms (+{s1 - d:.3f})")
if any(r[0] == "evcurl" for r in rows):
    print("\nC reference (libevent evhttp + libcurl multi, bodies passed through, same run):")
    for size in ["small", "medium", "large"]:
        n, e, s = med("nginx", size, 0)[0], med("evcurl", size, 0), med("serializerd", size, 0)[0]
        print(f"- {size}: {e[0]:,.0f} req/s ({e[1]:,.0f}–{e[2]:,.0f}) = {e[0] / n:.2f}× nginx; serializerd = {s / e[0]:.2f}× the C stack")
    e1 = med("evcurl", "c1", 1)[0]
    print(f"- one connection, 1 KB: p50 {e1:.3f} ms (+{e1 - d:.3f} over direct)")
print(f"serializerd RSS: idle {int(sys.argv[2]) / 1024:.1f} MiB, after the JSON runs {int(sys.argv[3]) / 1024:.1f} MiB")
errors = sum(int(r[6]) for r in rows)
print(f"non-2xx responses across all runs: {errors}")
EOF
