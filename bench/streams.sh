#!/usr/bin/env bash
# Server-sent events through serializerd and through nginx (proxy_buffering off) in the
# same run, in front of one origin (bench/streams/origin.py), on loopback only:
#   latency  STREAMS streams of a 1 KB JSON event every 10 ms for DUR seconds: the time
#            from the origin's write to the client's read (p50, p99; bench/streams/latency.c
#            reads), the direct path's beside it, and the proxy's CPU per event (utime +
#            stime from /proc). The origin is bench/streams/origin.c (LATENCY_ORIGIN=c,
#            the default: little jitter of its own) or origin.py (LATENCY_ORIGIN=python)
#   rate     one stream as fast as it goes for DUR seconds: events per second
#   memory   OPEN streams held open: the proxy's RSS above its idle RSS
#   slow     one client reading 10 KB/s of a 100 MiB byte stream for 20 s: serializerd's
#            RSS growth, and how much the origin could write (the pause reaching it)
#   ws       WebSocket echo of a MSG-byte text message (bench/streams/wsecho.c): one
#            connection's round trip (p50, p99) against the direct path's, then WSCONNS
#            connections for the proxy's CPU per message; nginx's WebSocket proxy beside it
#   wsmemory OPEN WebSockets held open, then OPEN SSE streams and OPEN WebSockets
#            together: the proxy's RSS above its idle RSS
# serializerd normalizes each event (json route); nginx forwards bytes. WebSocket
# messages are relayed as they are on both.
#   bench/streams.sh (make bench-streams) # STREAMS=100 DUR=10 OPEN=1000 ROUNDS=3
#   PARTS="latency" STREAMS=10 bench/streams.sh   # some parts only
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

STREAMS=${STREAMS:-100}
DUR=${DUR:-10}
OPEN=${OPEN:-1000}
ROUNDS=${ROUNDS:-3}
PARTS=${PARTS:-latency rate memory slow ws wsmemory}
MSG=${MSG:-1024}
WSCONNS=${WSCONNS:-10}
WORK=${WORK:-/tmp/serializerd-streams}
NGINX_PORT=18281 SD_PORT=18282

bench_start "$WORK" "nginx-light python3 gcc" nginx python3 gcc
gcc -O2 -o "$WORK/latency" bench/streams/latency.c
gcc -O2 -o "$WORK/wsecho" bench/streams/wsecho.c
gcc -O2 -o "$WORK/origin-c" bench/streams/origin.c
ulimit -n 16384
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

python3 -u bench/streams/origin.py > "$WORK/origin.port" &
PIDS+=($!)
for _ in $(seq 100); do [ -s "$WORK/origin.port" ] && break; sleep 0.1; done
ORIGIN=$(head -1 "$WORK/origin.port")
"$WORK/origin-c" "${GAP:-10}" 1024 > "$WORK/origin-c.port" &
PIDS+=($!)
for _ in $(seq 100); do [ -s "$WORK/origin-c.port" ] && break; sleep 0.1; done
CORIGIN=$(head -1 "$WORK/origin-c.port")

{ nginx_preamble "$WORK"
  cat <<CONF
  upstream origin { server 127.0.0.1:$ORIGIN; keepalive 64; }
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location / {
      proxy_pass http://origin; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_buffering off; proxy_read_timeout 1h;
    }
    location /c/ {
      proxy_pass http://127.0.0.1:$CORIGIN/; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_buffering off; proxy_read_timeout 1h;
    }
    location /ws {
      proxy_pass http://origin; proxy_http_version 1.1; proxy_read_timeout 1h;
      proxy_set_header Upgrade \$http_upgrade; proxy_set_header Connection "upgrade";
    }
  }
}
CONF
} > "$WORK/nginx.conf"
nginx -c "$WORK/nginx.conf" -g "daemon off;" &
PIDS+=($!)
NGINX_PID=$!

cat > "$WORK/serializerd.yaml" <<CONF
listen: 127.0.0.1:$SD_PORT
workers: 1
log: { level: error }
limits: { max_connections: 8192 }
routes:
  - name: live
    match: { prefix: /s/ }
    upstream: http://127.0.0.1:$ORIGIN/
    response: { serializer: json }
    stream: { bytes: [application/octet-stream] }
  - name: c
    match: { prefix: /sc/ }
    upstream: http://127.0.0.1:$CORIGIN/
    response: { serializer: json }
  - name: ws
    match: { prefix: /w/ }
    upstream: http://127.0.0.1:$ORIGIN/
CONF
"$BIN" serve --config "$WORK/serializerd.yaml" > "$WORK/logs/serializerd.log" 2>&1 &
PIDS+=($!)
SD_PID=$!
for port in $NGINX_PORT $SD_PORT; do
  for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
done

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }   # clock ticks
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }  # KiB
tick=$(getconf CLK_TCK)
per_unit() { awk -v d="$1" -v t="$tick" -v n="$2" 'BEGIN { printf "%.2f", d / t * 1e6 / n }'; }  # ticks, count → µs each

if [[ " $PARTS " == *" latency "* ]]; then
RATIOS=()
echo "| round | path | events | p50 µs | p99 µs | CPU µs per event |"
echo "|---|---|---:|---:|---:|---:|"
# The C origin ticks every GAP ms itself; the Python one reads it from the query.
if [ "${LATENCY_ORIGIN:-c}" = c ]; then direct_port=$CORIGIN direct=/tick nginx_path=/c/tick sd_path=/sc/tick
else direct_port=$ORIGIN direct="/tick?gap_ms=${GAP:-10}" nginx_path="/tick?gap_ms=${GAP:-10}" sd_path="/s/tick?gap_ms=${GAP:-10}"; fi
for round in $(seq "$ROUNDS"); do
  line=$("$WORK/latency" "$direct_port" "$direct" "$STREAMS" "$DUR")
  echo "| $round | direct | $(echo "$line" | awk '{print $2" | "$4" | "$6}') | — |"
  for peer in nginx serializerd; do
    if [ $peer = nginx ]; then port=$NGINX_PORT path=$nginx_path; pid=$(pgrep -P "$NGINX_PID" | head -1)
    else port=$SD_PORT path=$sd_path; pid=$SD_PID; fi
    before=$(cpu "$pid")
    line=$("$WORK/latency" "$port" "$path" "$STREAMS" "$DUR")
    after=$(cpu "$pid")
    events=$(echo "$line" | awk '{print $2}')
    per=$(per_unit $((after - before)) "$events")
    echo "| $round | $peer | $(echo "$line" | awk '{print $2" | "$4" | "$6}') | $per |"
    if [ $peer = nginx ]; then nginx_per=$per; else RATIOS+=("$(awk -v a="$per" -v b="$nginx_per" 'BEGIN { printf "%.2f", a / b }')"); fi
  done
done
# The steadiest summary of a noisy machine: each round's ratio, then their median.
printf '%s\n' "${RATIOS[@]}" | sort -n | awk '{ r[NR] = $1 } END {
  printf "\nCPU per event, serializerd ÷ nginx: %.2f–%.2f×, median %.2f× (%d rounds)\n", r[1], r[NR], (NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2), NR }'
fi

if [[ " $PARTS " == *" rate "* ]]; then
echo
echo "| round | path | events per second, one stream |"
echo "|---|---|---:|"
for round in $(seq "$ROUNDS"); do
  for peer in direct nginx serializerd; do
    case $peer in
      direct) url="http://127.0.0.1:$ORIGIN/fast?count=1000000" ;;
      nginx) url="http://127.0.0.1:$NGINX_PORT/fast?count=1000000" ;;
      serializerd) url="http://127.0.0.1:$SD_PORT/s/fast?count=1000000" ;;
    esac
    echo "| $round | $peer | $(python3 bench/streams/client.py rate "$url" "$DUR" | awk '{print $4}') |"
  done
done
fi

if [[ " $PARTS " == *" memory "* ]]; then
echo
echo "| path | idle RSS KiB | with $OPEN open streams | above idle |"
echo "|---|---:|---:|---:|"
for peer in nginx serializerd; do
  if [ $peer = nginx ]; then url="http://127.0.0.1:$NGINX_PORT/tick?gap_ms=1000"; pid=$(pgrep -P "$NGINX_PID" | head -1)
  else url="http://127.0.0.1:$SD_PORT/s/tick?gap_ms=1000"; pid=$SD_PID; fi
  idle=$(rss "$pid")
  python3 bench/streams/client.py hold "$url" "$OPEN" 8 > "$WORK/hold.out" &
  holder=$!
  for _ in $(seq 100); do grep -q open "$WORK/hold.out" 2>/dev/null && break; sleep 0.1; done
  sleep 2
  held=$(rss "$pid")
  wait "$holder"
  echo "| $peer | $idle | $held | $((held - idle)) |"
done
fi

if [[ " $PARTS " == *" slow "* ]]; then
echo
echo "| path | RSS before KiB | after 20 s at 10 KB/s | growth | the origin wrote |"
echo "|---|---:|---:|---:|---:|"
before=$(rss "$SD_PID")
python3 bench/streams/client.py slow "http://127.0.0.1:$SD_PORT/s/flood?mb=100" 10240 20 > "$WORK/slow.out"
after=$(rss "$SD_PID")
wrote=$(grep '^flood' "$WORK/origin.port" | tail -1 | awk '{print $2}')
echo "| serializerd | $before | $after | $((after - before)) | ${wrote:-0} bytes |"
fi

if [[ " $PARTS " == *" ws "* ]]; then
echo
echo "| round | path | one connection: messages | p50 µs | p99 µs | $WSCONNS connections: messages | CPU µs per message |"
echo "|---|---|---:|---:|---:|---:|---:|"
for round in $(seq "$ROUNDS"); do
  for peer in direct nginx serializerd; do
    case $peer in
      direct) port=$ORIGIN path=/ws pid= ;;
      nginx) port=$NGINX_PORT path=/ws pid=$(pgrep -P "$NGINX_PID" | head -1) ;;
      serializerd) port=$SD_PORT path=/w/ws pid=$SD_PID ;;
    esac
    one=$("$WORK/wsecho" "$port" "$path" 1 "$DUR" "$MSG")
    [ -n "$pid" ] && before=$(cpu "$pid")
    many=$("$WORK/wsecho" "$port" "$path" "$WSCONNS" "$DUR" "$MSG")
    per="—"
    if [ -n "$pid" ]; then
      after=$(cpu "$pid")
      per=$(per_unit $((after - before)) "$(echo "$many" | awk '{print $2}')")
    fi
    echo "| $round | $peer | $(echo "$one" | awk '{print $2" | "$4" | "$6}') | $(echo "$many" | awk '{print $2}') | $per |"
  done
done
fi

if [[ " $PARTS " == *" wsmemory "* ]]; then
echo
echo "| path | held | idle RSS KiB | held RSS KiB | above idle |"
echo "|---|---|---:|---:|---:|"
for peer in nginx serializerd; do
  if [ $peer = nginx ]; then port=$NGINX_PORT ws=/ws sse="http://127.0.0.1:$NGINX_PORT/tick?gap_ms=1000"; pid=$(pgrep -P "$NGINX_PID" | head -1)
  else port=$SD_PORT ws=/w/ws sse="http://127.0.0.1:$SD_PORT/s/tick?gap_ms=1000"; pid=$SD_PID; fi
  # One idle figure: memory a first round took is not always given back before the next.
  idle=$(rss "$pid")
  for held in websockets both; do
    "$WORK/wsecho" "$port" "$ws" "$OPEN" 10 0 > "$WORK/wshold.out" &
    wsholder=$!
    sseholder=
    if [ $held = both ]; then
      python3 bench/streams/client.py hold "$sse" "$OPEN" 10 > "$WORK/hold.out" &
      sseholder=$!
    fi
    for _ in $(seq 200); do
      grep -q open "$WORK/wshold.out" 2>/dev/null && { [ -z "$sseholder" ] || grep -q open "$WORK/hold.out" 2>/dev/null; } && break
      sleep 0.1
    done
    sleep 2
    now=$(rss "$pid")
    wait "$wsholder" ${sseholder:+"$sseholder"}
    label="$OPEN WebSockets"; [ $held = both ] && label="$OPEN WebSockets + $OPEN SSE"
    echo "| $peer | $label | $idle | $now | $((now - idle)) |"
  done
done
fi
