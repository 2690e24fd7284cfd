# Shared by the HTTP benchmarks (sourced, not run).

BIN=${BIN:-.build/release/serializerd}

# The start of every HTTP benchmark: bench_start WORK "apt packages" tool...
# Each named tool must exist, the release binary is built when missing, WORK starts empty.
bench_start() {
  local work=$1 packages=$2
  shift 2
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$0 needs $tool (apt-get install $packages)"; exit 1; }
  done
  [ -x "$BIN" ] || swift build -c release --static-swift-stdlib --product serializerd
  rm -rf "$work" && mkdir -p "$work/www" "$work/logs" "$work/tmp"
}

# The C reference (the same evhttp + libcurl stack, bodies passed through), built into $1.
bench_build_reference() {
  gcc -O2 bench/reference/evcurl_proxy.c $(pkg-config --cflags --libs libevent libcurl) -o "$1"
}

# The top of an nginx.conf that keeps everything under $1 (pid, logs, temp files) and
# lets one keep-alive connection carry a whole run.
nginx_preamble() {
  cat <<CONF
worker_processes 1;
pid $1/nginx.pid;
error_log $1/logs/error.log warn;
events { worker_connections 4096; }
http {
  include /etc/nginx/mime.types;
  access_log off;
  client_body_temp_path $1/tmp/body; proxy_temp_path $1/tmp/proxy;
  fastcgi_temp_path $1/tmp/fcgi; uwsgi_temp_path $1/tmp/uwsgi; scgi_temp_path $1/tmp/scgi;
  keepalive_requests 10000000;
CONF
}

# The proxy benchmarks' payloads in $1: small/medium/large.json (≈1 KB, 100 KB, 1 MB,
# `json.dumps(indent=1)` of item lists, non-ASCII as \u escapes) and a 100 KB XML catalog.
bench_payloads() {
python3 - "$1" <<'EOF'
import json, random, sys
random.seed(7)
out = sys.argv[1]
def item(i):
    return {"id": i, "name": f"item {i}", "price": round(random.random() * 100, 2), "tags": ["a", "b", "c"][: i % 4],
            "active": i % 2 == 0, "note": None, "text": "lorem ipsum dolor sit amet \u00e9\u00e8 " * (i % 3)}
for name, size in [("small", 1_000), ("medium", 100_000), ("large", 1_000_000)]:
    items, data = [], b""
    while len(data) < size:
        items.append(item(len(items)))
        data = json.dumps({"items": items}, indent=1).encode()
    open(f"{out}/{name}.json", "wb").write(data)
parts = ['<?xml version="1.0"?>\n<catalog xmlns:x="urn:x">']
i = 0
while sum(map(len, parts)) < 100_000:
    i += 1
    parts.append(f'<product id="p{i}" x:sku="S{i}"><name>Widget {i} &amp; co</name><price cur="EUR">{i % 97}.5</price>'
                 f'<tags><tag>a</tag><tag>b</tag></tags><d><![CDATA[<b>x</b>]]></d></product>')
parts.append("</catalog>")
open(f"{out}/catalog.xml", "w").write("\n".join(parts))
EOF
}

# serializerd's benchmark config on port $1 in front of the origin on port $2: one
# worker, production logging (no request lines), the json route under /bench/.
bench_config() {
  cat <<CONF
listen: 127.0.0.1:$1
workers: 1
limits: { max_response_body: 32MiB }
log: { format: json, level: warning }
routes:
  - name: json
    match: { prefix: /bench/ }
    upstream: http://127.0.0.1:$2/
CONF
}

# One more route for bench_config's file: NAME PREFIX ORIGIN_PORT [SETTING] (one YAML line).
bench_route() {
  printf '  - name: %s\n    match: { prefix: %s }\n    upstream: http://127.0.0.1:%s/\n' "$1" "$2" "$3"
  [ -z "${4:-}" ] || printf '    %s\n' "$4"
}

# One wrk run (core 0, -t1) against URL $2 while process $1 is measured: prints
# "req/s requests cpu-ticks" (the process's utime+stime over the run; CPU per request is
# ticks / CLK_TCK / requests).
bench_measured_run() {
  local before after out
  before=$(awk '{print $14 + $15}' "/proc/$1/stat")
  out=$(taskset -c 0 wrk -t1 -c"$CONNS" -d"$DUR" "$2" 2>/dev/null)
  after=$(awk '{print $14 + $15}' "/proc/$1/stat")
  echo "$(echo "$out" | awk '/Requests\/sec/ {print $2}') $(echo "$out" | awk '/requests in/ {print $1}') $((after - before))$(echo "$out" | awk '/Non-2xx/ {print " ERR"}')"
}

# Both sides of an A/B pair loaded at once (two wrk, core 0), each daemon measured over
# the same interval: "on-req/s on-requests on-ticks off-req/s off-requests off-ticks".
# Both daemons share core 1, so whatever else the host does in that interval falls on
# both; on this shared machine that steadies the on/off ratio far more than alternating.
bench_concurrent_run() {
  local on_before off_before on_after off_after on_out off_out
  on_before=$(awk '{print $14 + $15}' "/proc/$ON_PID/stat")
  off_before=$(awk '{print $14 + $15}' "/proc/$OFF_PID/stat")
  taskset -c 0 wrk -t1 -c"$CONNS" -d"$DUR" "$1" > "$WORK/wrk-on.txt" 2>/dev/null &
  local on_wrk=$!
  taskset -c 0 wrk -t1 -c"$CONNS" -d"$DUR" "$2" > "$WORK/wrk-off.txt" 2>/dev/null
  wait "$on_wrk"
  on_after=$(awk '{print $14 + $15}' "/proc/$ON_PID/stat")
  off_after=$(awk '{print $14 + $15}' "/proc/$OFF_PID/stat")
  echo "$(awk '/Requests\/sec/ {print $2}' "$WORK/wrk-on.txt") $(awk '/requests in/ {print $1}' "$WORK/wrk-on.txt") $((on_after - on_before))" \
       "$(awk '/Requests\/sec/ {print $2}' "$WORK/wrk-off.txt") $(awk '/requests in/ {print $1}' "$WORK/wrk-off.txt") $((off_after - off_before))" \
       "$(cat "$WORK/wrk-on.txt" "$WORK/wrk-off.txt" | awk '/Non-2xx/ {print "ERR"}')"
}

# An A/B pair in front of one nginx origin: nginx serving $WORK/www on port $ORIGIN, and
# serializerd on $WORK/on.yaml and $WORK/off.yaml (ports $ON and $OFF), all pinned to
# core 1; waits until both answer GET $1. Sets ON_PID and OFF_PID; `bench_stop_pair`
# (extra PIDs as arguments) stops what it started.
bench_start_pair() {
  { nginx_preamble "$WORK"; printf '  server { listen 127.0.0.1:%s; root %s/www; }\n}\n' "$ORIGIN" "$WORK"; } > "$WORK/nginx.conf"
  taskset -c 1 nginx -c "$WORK/nginx.conf"
  taskset -c 1 "$BIN" serve --config "$WORK/on.yaml" > "$WORK/logs/on.log" 2>&1 &
  ON_PID=$!
  taskset -c 1 "$BIN" serve --config "$WORK/off.yaml" > "$WORK/logs/off.log" 2>&1 &
  OFF_PID=$!
  for port in $ON $OFF; do
    for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port$1" >/dev/null 2>&1 && break; sleep 0.1; done
  done
}

bench_stop_pair() {
  kill "$ON_PID" "$OFF_PID" "$@" 2>/dev/null || true
  kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
}
