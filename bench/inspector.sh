#!/usr/bin/env bash
# What one open inspector page costs the daemon: two serializerd instances in front of
# the same nginx origin on loopback, the same config; "on" has /-/ui open in headless
# Chromium (a real page: its /-/events stream, drawing every flow), "off" has nothing
# attached. Each round loads both at once (1 KB JSON, one wrk -t1 -c32 each) and measures
# both daemons over the same interval; the per-round on/off ratios are reported (median
# and range), with the rows the page showed. Daemons pinned to core 1; wrk and the
# browser to core 0. Every load run is bounded by wrk's -d, the page by a timeout.
#
#   bench/inspector.sh             # REPS=5 DUR=5s CONNS=32
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

REPS=${REPS:-5}
DUR=${DUR:-5s}
CONNS=${CONNS:-32}
WORK=${WORK:-/tmp/serializerd-bench-inspector}
ORIGIN=18111 ON=18114 OFF=18115
SECONDS_OPEN=$(( (REPS * ${DUR%s}) + 30 ))

bench_start "$WORK" "nginx-light wrk util-linux curl chromium chromium-driver python3-selenium" nginx wrk taskset curl chromedriver
bench_payloads "$WORK/www"
bench_config "$ON" "$ORIGIN" > "$WORK/on.yaml"
bench_config "$OFF" "$ORIGIN" > "$WORK/off.yaml"
PAGE_PID=""
trap 'bench_stop_pair ${PAGE_PID:+"$PAGE_PID"}' EXIT
bench_start_pair /bench/small.json

# The page stays open for the whole run, then reports what it showed.
taskset -c 0 /usr/bin/python3 - "$ON" "$SECONDS_OPEN" "$WORK/page.txt" <<'PY' &
import sys, time
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
port, seconds, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
options = Options()
for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,900"]:
    options.add_argument(a)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
try:
    driver.get(f"http://127.0.0.1:{port}/-/ui")
    open(out, "w").write("open\n")
    deadline = time.time() + seconds
    while time.time() < deadline and "done" not in open(out).read():
        time.sleep(0.5)
    state = driver.execute_script("return [document.getElementById('count').textContent, document.getElementById('state').textContent,"
                                  " performance.memory ? performance.memory.usedJSHeapSize : -1]")
    open(out, "a").write(f"page: {state[0]}, {state[1]}, JS heap {state[2] / 1e6:.1f} MB\n")
finally:
    driver.quit()
PY
PAGE_PID=$!
for _ in $(seq 100); do grep -q open "$WORK/page.txt" 2>/dev/null && break; sleep 0.2; done
sleep 1

RESULTS="$WORK/results.txt"
: > "$RESULTS"
for _ in $(seq "$REPS"); do
  bench_concurrent_run "http://127.0.0.1:$ON/bench/small.json" "http://127.0.0.1:$OFF/bench/small.json" >> "$RESULTS"
done
echo done >> "$WORK/page.txt"
wait "$PAGE_PID" || true
PAGE_PID=""

python3 bench/pair_summary.py "$RESULTS" "no page" "/-/ui open in Chromium" \
  "The two daemons share core 1, so req/s follows CPU per request; the browser shares core 0 with both wrk."
grep page: "$WORK/page.txt" || true
