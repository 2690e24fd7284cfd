#!/usr/bin/env bash
# What one open inspector page costs the daemon: two serializerd instances in front of
# the same nginx origin on loopback, the same config; "on" has /-/ui open in headless
# Chromium (a real page: its /-/events stream, drawing every flow), "off" has nothing
# attached. Runs alternate off/on (1 KB JSON, wrk -t1 -c32), medians and the on/off
# ratio are reported, with the rows the page showed. Daemons pinned to core 1; wrk and
# the browser to core 0. Every load run is bounded by wrk's -d, the page by a timeout.
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
SECONDS_OPEN=$(( (REPS * 2 * ${DUR%s}) + 30 ))

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
  echo "off $(bench_measured_run "$OFF_PID" "http://127.0.0.1:$OFF/bench/small.json")" >> "$RESULTS"
  echo "on $(bench_measured_run "$ON_PID" "http://127.0.0.1:$ON/bench/small.json")" >> "$RESULTS"
done
echo done >> "$WORK/page.txt"
wait "$PAGE_PID" || true
PAGE_PID=""

python3 - "$RESULTS" "$(getconf CLK_TCK)" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
tck = float(sys.argv[2])
def side(name):
    rs = [r for r in rows if r[0] == name]
    return [float(r[1]) for r in rs], [int(r[3]) / tck * 1e6 / int(r[2]) for r in rs]
off, off_cpu = side("off")
on, on_cpu = side("on")
print("| daemon | req/s median (min–max) | daemon CPU µs per request median (min–max) |")
print("|---|---|---|")
print(f"| no page | {statistics.median(off):,.0f} ({min(off):,.0f}–{max(off):,.0f}) | {statistics.median(off_cpu):.1f} ({min(off_cpu):.1f}–{max(off_cpu):.1f}) |")
print(f"| /-/ui open in Chromium | {statistics.median(on):,.0f} ({min(on):,.0f}–{max(on):,.0f}) | {statistics.median(on_cpu):.1f} ({min(on_cpu):.1f}–{max(on_cpu):.1f}) |")
print(f"\non/off: req/s **{statistics.median(on) / statistics.median(off):.3f}**, daemon CPU per request "
      f"**{statistics.median(on_cpu) / statistics.median(off_cpu):.3f}** (medians). The browser shares core 0 with wrk "
      "on this 2-core machine, so req/s also counts the page's own drawing; the daemon's CPU per request is its cost alone.")
PY
grep page: "$WORK/page.txt" || true
