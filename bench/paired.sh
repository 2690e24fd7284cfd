# Sourced by the paired benchmarks: two daemons loaded at once on the same core, their CPU
# per request compared round by round (the machine's noise hits both alike).

# The arguments every paired bench takes, PAYLOAD SECONDS ROUNDS [BINARY], into PAYLOAD,
# SECONDS_PER_ROUND, ROUNDS, BIN and W (the bench-peers scratch whose payloads it serves);
# the script's header (its first USAGE_LINES lines) when they are missing.
#
#   paired_args "$0" USAGE_LINES "$@"
paired_args() {
  local script=$1 lines=$2
  shift 2
  [ $# -ge 3 ] || { sed -n "2,${lines}p" "$script"; exit 2; }
  PAYLOAD=$1; SECONDS_PER_ROUND=$2; ROUNDS=$3; BIN=${4:-.build/release/serializerd}
  W=${W:-/tmp/peerbench}
  [ -f "$W/www/$PAYLOAD.json" ] || { echo "no $W/www/$PAYLOAD.json: run ../shared/bench-peers/run.sh once" >&2; exit 1; }
}

# A scratch directory (`scratch`) and the processes started (`PIDS`), both gone at exit:
# each process stopped by its PID.
paired_scratch() {
  scratch=$(mktemp -d)
  PIDS=()
  trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$scratch"' EXIT
}

# Starts BIN_A on $scratch/a.yaml and BIN_B on $scratch/b.yaml (listening on 28185 and
# 28195) pinned to core 1, sets AP and BP, and waits until both answer /bench/PAYLOAD.json.
#
#   paired_daemons BIN_A BIN_B PAYLOAD
paired_daemons() {
  local port
  taskset -c 1 "$1" serve --config "$scratch/a.yaml" >"$scratch/a.log" 2>&1 & AP=$!; PIDS+=($AP)
  taskset -c 1 "$2" serve --config "$scratch/b.yaml" >"$scratch/b.log" 2>&1 & BP=$!; PIDS+=($BP)
  for port in 28185 28195; do
    for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/bench/$3.json" && break; sleep 0.1; done
  done
}

# ROUNDS rounds: wrk -t1 -c16 on core 0 against each daemon's /bench/PAYLOAD.json for
# SECONDS, at the same time; CPU time of AP and BP from /proc/PID/stat over the round,
# divided by the requests each served.
#
#   paired_rounds SECONDS ROUNDS NAME_A NAME_B PAYLOAD
paired_rounds() {
  local seconds=$1 rounds=$2 aname=$3 bname=$4 payload=$5 ap=$AP bp=$BP r a0 a1 b0 b1 wa
  local aurl="http://127.0.0.1:28185/bench/$payload.json" burl="http://127.0.0.1:28195/bench/$payload.json"
  for r in $(seq "$rounds"); do
    a0=$(awk '{print $14 + $15}' "/proc/$ap/stat"); b0=$(awk '{print $14 + $15}' "/proc/$bp/stat")
    taskset -c 0 wrk -t1 -c16 -d"${seconds}s" "$aurl" > "$scratch/wa" & wa=$!
    taskset -c 0 wrk -t1 -c16 -d"${seconds}s" "$burl" > "$scratch/wb"
    wait $wa
    a1=$(awk '{print $14 + $15}' "/proc/$ap/stat"); b1=$(awk '{print $14 + $15}' "/proc/$bp/stat")
    python3 - "$r" "$a0" "$a1" "$b0" "$b1" "$(getconf CLK_TCK)" \
      "$(awk '/requests in/{print $1}' "$scratch/wa")" "$(awk '/requests in/{print $1}' "$scratch/wb")" "$aname" "$bname" <<'PY'
import sys
r, a0, a1, b0, b1, tick, ra, rb, na, nb = sys.argv[1:]
a = (float(a1) - float(a0)) / float(tick) * 1e6 / int(ra)
b = (float(b1) - float(b0)) / float(tick) * 1e6 / int(rb)
print(f"round {r}: {na} {a:.1f} us/req, {nb} {b:.1f} us/req, {nb}/{na} {b / a:.3f}  ({ra} and {rb} requests)")
PY
  done
}

# An nginx origin on core 1 serving ROOT at 127.0.0.1:PORT (keep-alive, no access log);
# LOCATION: directives for `location /` (e.g. `add_header Cache-Control no-cache;`).
#
#   paired_origin PORT ROOT [LOCATION]
paired_origin() {
  mkdir -p "$scratch/nginx/logs"
  cat > "$scratch/nginx/origin.conf" <<NGINX
worker_processes 1;
pid $scratch/nginx/origin.pid;
error_log $scratch/nginx/error.log warn;
events { worker_connections 1024; }
http {
    types { application/json json; }
    access_log off;
    keepalive_timeout 65s; keepalive_requests 10000000;
    open_file_cache max=100 inactive=60s;
    server {
        listen 127.0.0.1:$1;
        root $2;
        location / { ${3:-} }
    }
}
NGINX
  taskset -c 1 nginx -p "$scratch/nginx" -c "$scratch/nginx/origin.conf" -g 'daemon off;' >"$scratch/origin.log" 2>&1 & PIDS+=($!)
}
