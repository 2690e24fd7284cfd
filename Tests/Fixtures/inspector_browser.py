"""Drives serializerd's /-/ui page in headless Chromium (Debian's chromium and
chromium-driver, python3-selenium) and prints what it saw as one JSON object.

    inspector_browser.py PORT

Loopback only. The page is loaded with the flows the caller made beforehand; then this
script makes requests of its own (a success, a failure, a hostile path) and times how long
each takes to appear, uses the filters, and opens a failure's details. Every wait is
bounded."""
import json, sys, time, urllib.request
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

port = int(sys.argv[1])
base = f"http://127.0.0.1:{port}"


def get(path, request_id):
    req = urllib.request.Request(base + path, headers={"X-Request-Id": request_id})
    try:
        urllib.request.urlopen(req, timeout=5).read()
    except urllib.error.HTTPError as e:
        e.read()


def badge(request_id):
    """The first badge in the row of `request_id`, once the row has one (10 s)."""
    return wait(lambda: driver.execute_script(
        "const r = Array.from(document.querySelectorAll('#rows tr')).find(t => t.dataset.id === arguments[0]);"
        " const b = r && r.querySelector('.badge'); return b && b.textContent", request_id), 10)


def wait(condition, seconds=10):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.005)
    return None


options = Options()
for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,900"]:
    options.add_argument(argument)
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
out = {}
try:
    driver.get(base + "/-/ui")
    # Read in one script: the page re-renders its rows as events arrive.
    rows = lambda: driver.execute_script(
        "return Array.from(document.querySelectorAll('#rows tr')).map(r => ({id: r.dataset.id,"
        " cells: Array.from(r.cells).map(c => c.textContent), imgs: r.querySelectorAll('img').length}))")
    ids = lambda: [r["id"] for r in rows()]

    def open_row(request_id):
        """Waits for a flow's row, then opens its details."""
        wait(lambda: request_id in ids(), 10)
        driver.find_element(By.CSS_SELECTOR, f"#rows tr[data-id='{request_id}']").click()
    out["initial_rows"] = len(wait(rows) or [])
    out["state"] = wait(lambda: driver.find_element(By.ID, "state").text == "live" and "live") or driver.find_element(By.ID, "state").text

    # Live: each request appears; the time from its reply to its row.
    latencies = []
    for k in range(5):
        get("/api/json", f"live-{k}")
        sent = time.time()
        if wait(lambda: f"live-{k}" in ids(), 5):
            latencies.append((time.time() - sent) * 1000)
    out["live_ms"] = latencies
    get("/api/json?body=%7B%22a%22%3A%5B1%2C%2C%5D%7D", "browser-failure")
    # A request id is any printable ASCII a client sends: markup in it stays text.
    hostile = "<img/src=x/onerror=document.title='owned'>"
    get("/api/json", hostile)
    wait(lambda: hostile in ids() and "browser-failure" in ids(), 5)
    driver.execute_script("document.querySelector('#rows tr[data-id]').parentNode; "
                          "Array.from(document.querySelectorAll('#rows tr')).find(r => r.dataset.id === arguments[0]).click()", hostile)
    out["hostile_shown"] = wait(lambda: driver.execute_script(
        "const d = document.getElementById('d-facts'); return d.querySelector('dd') && d.querySelector('dd').textContent"), 5)
    out["images_in_page"] = driver.execute_script("return document.querySelectorAll('img').length")
    out["title"] = driver.title

    # Filters narrow the list.
    out["all_rows"] = len(rows())
    Select(driver.find_element(By.ID, "f-outcome")).select_by_value("failed")
    out["failed_rows"] = [r["cells"][5] for r in rows()]
    Select(driver.find_element(By.ID, "f-outcome")).select_by_value("")
    box = driver.find_element(By.ID, "f-text")
    box.send_keys("live-3")
    out["text_rows"] = ids()
    driver.execute_script("const b = document.getElementById('f-text'); b.value = ''; b.dispatchEvent(new Event('input'))")
    out["rows_after_clearing"] = len(rows())
    # The source filter: a mocked flow alone, its source shown in its row.
    get("/api/mocked", "mocked-1")
    wait(lambda: "mocked-1" in ids(), 5)
    Select(driver.find_element(By.ID, "f-source")).select_by_value("mock")
    out["mock_rows"] = [(r["id"], r["cells"][6]) for r in rows()]
    Select(driver.find_element(By.ID, "f-source")).select_by_value("")
    # A caching route's flows: the cache's result beside the source.
    get("/kept/cached/inspector", "cached-1")
    get("/kept/cached/inspector", "cached-2")
    wait(lambda: "cached-2" in ids(), 5)
    out["cache_rows"] = sorted([r["id"], r["cells"][6]] for r in rows() if r["id"].startswith("cached-"))

    # A flow with a long path and a long header value, for the width checks below.
    get("/api/" + "long-segment/" * 30 + "json", "wide-1")
    wait(lambda: "wide-1" in ids(), 5)
    # A failure's details: the problem document and the reproduce command.
    open_row("browser-failure")
    command = wait(lambda: driver.find_element(By.ID, "d-command").text)
    out["command"] = command
    out["problem"] = json.loads(driver.find_element(By.ID, "d-problem").text)
    out["body_href"] = driver.find_element(By.ID, "d-body").get_attribute("href")
    out["body_download"] = driver.find_element(By.ID, "d-body").get_attribute("download")
    # At 1400 px the details pane holds its values: no page-wide horizontal scroll, no
    # value past the pane's right edge.
    out["overflow"] = driver.execute_script(
        "const a = document.getElementById('details').getBoundingClientRect();"
        " const out = []; if (document.documentElement.scrollWidth > window.innerWidth) out.push('page ' + document.documentElement.scrollWidth);"
        " if (a.right > window.innerWidth + 1) out.push('pane ' + a.right);"
        " for (const d of document.querySelectorAll('#details dd, #details pre')) { const r = d.getBoundingClientRect();"
        "   if (r.width > 0 && r.right > a.right + 1) out.push(d.textContent.slice(0, 40) + ' ' + r.right); }"
        " return out")

    # Keyboard: Escape closes the details, j moves the selection.
    driver.find_element(By.TAG_NAME, "body").send_keys("\ue00c")
    out["details_hidden_after_escape"] = driver.find_element(By.ID, "details").get_attribute("hidden") is not None
    driver.find_element(By.TAG_NAME, "body").send_keys("j")
    out["selected_after_j"] = len(driver.find_elements(By.CSS_SELECTOR, "#rows tr.selected"))
    # A slow transfer shows in flight with a progress bar, then lands in the list.
    import threading
    slow = threading.Thread(target=get, args=("/api/trickle?bytes=200000&seconds=2.5", "slow-1"))
    slow.start()
    bar = wait(lambda: driver.execute_script(
        "const r = document.querySelector('#inflight li[data-id=\"slow-1\"]');"
        " return r && r.querySelector('progress') && r.querySelector('progress').max"), 10)
    out["inflight_bar_max"] = bar
    slow.join(timeout=20)
    out["inflight_after"] = wait(lambda: driver.execute_script(
        "return document.querySelectorAll('#inflight li').length === 0 ? 'empty' : null"), 10)
    # An upstream that refuses twice: its reachability in the header.
    get("/gone/x", "gone-1")
    get("/gone/x", "gone-2")
    out["reach"] = wait(lambda: driver.execute_script(
        "const t = document.getElementById('reach').textContent; return t.includes('gone: unreachable') ? t : null"), 10)
    # A failure that kept no upstream response: its note, and no reproduce command or body link.
    open_row("gone-1")
    out["unkept"] = wait(lambda: driver.execute_script(
        "const n = document.getElementById('d-note').textContent; if (!n) return null;"
        " const shown = (id) => { const e = document.getElementById(id); return !!(e.offsetWidth || e.offsetHeight); };"
        " return {note: n, command: shown('d-command'), body: shown('d-body'), copy: shown('d-copy'), problem: shown('d-problem')}"), 5)
    # A flow network conditions touched: what they did, in its row and its details.
    get("/lossy/json", "faulted-1")
    open_row("faulted-1")
    out["fault_row"] = [r["cells"][6] for r in rows() if r["id"] == "faulted-1"]
    out["fault_facts"] = wait(lambda: driver.execute_script(
        "const d = document.getElementById('d-facts'); const t = Array.from(d.querySelectorAll('dt'));"
        " const i = t.findIndex(x => x.textContent === 'faults'); return i < 0 ? null : d.querySelectorAll('dd')[i].textContent"), 5)
    # A stream's last events, kept while the page watches, redacted.
    get("/api/sse?n=3", "stream-1")
    open_row("stream-1")
    out["stream_events"] = wait(lambda: driver.execute_script(
        "const l = Array.from(document.querySelectorAll('#d-events li')); if (l.length < 3) return null;"
        " return {title: document.getElementById('d-stream-title').textContent,"
        " events: l.map(li => li.querySelector('pre').textContent), meta: l.map(li => li.querySelector('.meta').textContent)}"), 5)
    # An answer that broke its route's contract (reported): a badge in its row, the
    # violations in its details; then a shape change in the header.
    get("/shaped/json", "shaped-1")
    out["contract_badge"] = badge("shaped-1")
    open_row("shaped-1")
    out["contract_problem"] = wait(lambda: driver.execute_script(
        "const t = document.getElementById('d-problem').textContent; return t.includes('contract-violation') ? t : null"), 5)
    get("/shaped/json?body=%7B%22a%22%3A%5B1%5D%2C%22b%22%3A%22x%22%2C%22c%22%3A1%7D", "shaped-2")
    out["drift"] = wait(lambda: driver.execute_script(
        "const t = document.getElementById('drift').textContent; return t.includes('shaped:') ? t : null"), 10)
    # A retried request and one that waited in its route's queue (rate 1/s): their badges.
    get("/retried/flaky?fail=1&key=inspector", "retried-1")
    out["retry_badge"] = badge("retried-1")
    get("/paced/json", "paced-1")
    get("/paced/json", "paced-2")
    out["queue_badge"] = badge("paced-2")
    # The page asks for the unkept flow's evidence and gets a 404, which Chromium logs.
    out["console_errors"] = [e["message"] for e in driver.get_log("browser")
                             if e["level"] == "SEVERE" and "/-/failures/gone-1 " not in e["message"]]
finally:
    driver.quit()
print(json.dumps(out))
