#!/usr/bin/env bash
# HTTP/2 to the upstream against HTTP/1.1: connections opened and CPU per request.
#
# An nginx origin serves bench-peers' payloads over TLS with HTTP/2 (certificates made
# here by openssl), its stub_status counting accepted connections. Two daemons of one
# build, each one worker on core 1: A's route `http_version: 1.1`, B's `http_version: 2`,
# both trusting the origin's CA. First each alone under wrk -t1 -c32 -d3s on core 0, with
# the connections nginx accepted meanwhile (DESIGN target for B: at most 2); then ROUNDS
# paired rounds of SECONDS (both loaded at once, CPU from /proc/PID/stat over requests):
# B/A below 1 is HTTP/2 cheaper.
#
#   bench/http2.sh PAYLOAD SECONDS ROUNDS [BINARY]
#   bench/http2.sh small 5 4
#
# Needs the payloads of one ../shared/bench-peers run (W, default /tmp/peerbench/www).
# Loopback only; every process it starts is stopped by PID.
set -euo pipefail
. "$(dirname "$0")/paired.sh"
paired_args "$0" 16 "$@"
paired_scratch
ORIGIN=28184 STATUS=28194
cd "$scratch"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=bench-ca 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout origin.key -subj /CN=origin -out origin.csr 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' > origin.ext
openssl x509 -req -in origin.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile origin.ext -out origin.pem 2>/dev/null
cd - >/dev/null
cat > "$scratch/origin.conf" <<NGINX
worker_processes 1;
pid $scratch/origin.pid;
error_log $scratch/error.log warn;
events { worker_connections 1024; }
http {
    types { application/json json; }
    access_log off;
    keepalive_timeout 65s; keepalive_requests 10000000; http2_max_requests 10000000;
    open_file_cache max=100 inactive=60s;
    client_body_temp_path $scratch; proxy_temp_path $scratch; fastcgi_temp_path $scratch; uwsgi_temp_path $scratch; scgi_temp_path $scratch;
    server {
        listen 127.0.0.1:$ORIGIN ssl http2;
        ssl_certificate $scratch/origin.pem; ssl_certificate_key $scratch/origin.key;
        root $W/www;
    }
    server { listen 127.0.0.1:$STATUS; location / { stub_status; } }
}
NGINX
for side in a b; do
  port=$([ $side = a ] && echo 28185 || echo 28195)
  version=$([ $side = a ] && echo 1.1 || echo 2)
  printf 'listen: 127.0.0.1:%s\nworkers: 1\nlog: { level: error }\nroutes:\n  - name: bench\n    match: { prefix: /bench/ }\n    upstream: https://127.0.0.1:%s/\n    http_version: %s\n    tls: { ca_file: %s/ca.pem }\n' \
    "$port" "$ORIGIN" "$version" "$scratch" > "$scratch/$side.yaml"
done
taskset -c 1 nginx -p "$scratch" -c "$scratch/origin.conf" -g 'daemon off;' >"$scratch/origin.log" 2>&1 & PIDS+=($!)
paired_daemons "$BIN" "$BIN" "$PAYLOAD"
accepts() { curl -s "http://127.0.0.1:$STATUS/" | awk 'NR==3 {print $1}'; }
for side in a b; do
  port=$([ $side = a ] && echo 28185 || echo 28195)
  before=$(accepts)
  taskset -c 0 wrk -t1 -c32 -d3s "http://127.0.0.1:$port/bench/$PAYLOAD.json" > "$scratch/w$side"
  after=$(accepts)
  # stub_status's own request is one accepted connection.
  echo "$([ $side = a ] && echo 'HTTP/1.1' || echo 'HTTP/2  ') alone, c32: $(awk '/Requests\/sec/{print $2}' "$scratch/w$side") req/s, upstream connections opened $((after - before - 1))"
done
versions=$(curl -s http://127.0.0.1:28195/metrics | grep -E '^serializerd_upstream_requests_total' | tr '\n' ' ')
echo "B: $versions"
paired_rounds "$SECONDS_PER_ROUND" "$ROUNDS" HTTP/1.1 HTTP/2 "$PAYLOAD"
