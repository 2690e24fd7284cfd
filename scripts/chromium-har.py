"""Saves a HAR 1.2 file of what headless Chromium fetched, from its own DevTools protocol
(Network domain events and Network.getResponseBody), shaped as Chrome's network panel
exports it. It made Tests/Fixtures/chromium-devtools.har, which the tape tests import.

    /usr/bin/python3 scripts/chromium-har.py OUT.har

Needs Debian's chromium, chromium-driver and python3-selenium. Serves a page and an API
of its own on 127.0.0.1 (an ephemeral port), loads the page, which fetches JSON with a
query, an XML feed, a JSON POST and a PNG; every wait is bounded."""
import base64, json, sys, threading, time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
PAGE = b"""<!doctype html><title>tape</title><script>
(async () => {
  const got = [];
  got.push(await (await fetch('/api/items.json?page=2&sort=name')).json());
  got.push(await (await fetch('/api/feed.xml')).text());
  got.push(await (await fetch('/api/orders', {method: 'POST', headers: {'Content-Type': 'application/json'},
                                              body: JSON.stringify({item: 7, note: 'caf\\u00e9 "x"'})})).json());
  got.push((await (await fetch('/api/pixel.png')).arrayBuffer()).byteLength);
  document.title = 'done ' + got.length;
})();
</script>"""


class Handler(BaseHTTPRequestHandler):
    def answer(self, status, kind, body):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/":
            self.answer(200, "text/html; charset=utf-8", PAGE)
        elif path == "/api/items.json":
            self.answer(200, "application/json", json.dumps({"page": 2, "items": [{"id": 1, "name": "café", "price": 2.50}, {"id": 2, "name": "tea", "price": None}]}).encode())
        elif path == "/api/feed.xml":
            self.answer(200, "application/xml", b'<?xml version="1.0"?><feed><entry id="1">first</entry><entry id="2">second</entry></feed>')
        elif path == "/api/pixel.png":
            self.answer(200, "image/png", PNG)
        else:
            self.answer(404, "application/json", b'{"error":"not found"}')

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.answer(201, "application/json", json.dumps({"created": True, "echo": json.loads(body)}).encode())

    def log_message(self, *args):
        pass


def main(out_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    options = Options()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.get(base + "/")
        deadline = time.time() + 20
        while driver.title != "done 4" and time.time() < deadline:
            time.sleep(0.05)
        if driver.title != "done 4":
            sys.exit(f"the page did not finish its fetches (title {driver.title!r})")
        events = [json.loads(entry["message"])["message"] for entry in driver.get_log("performance")]
        requests, responses, finished = {}, {}, set()
        for event in events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Network.requestWillBeSent":
                requests[params["requestId"]] = params
            elif method == "Network.responseReceived":
                responses[params["requestId"]] = params
            elif method == "Network.loadingFinished":
                finished.add(params["requestId"])
        entries = []
        for rid, sent in requests.items():
            if rid not in responses or rid not in finished or not sent["request"]["url"].startswith(base + "/api/"):
                continue
            entries.append(entry(driver, rid, sent, responses[rid]))
        entries.sort(key=lambda e: e["startedDateTime"])
        har = {"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"},
                       "pages": [{"startedDateTime": entries[0]["startedDateTime"], "id": "page_1", "title": base + "/",
                                  "pageTimings": {"onContentLoad": -1, "onLoad": -1}}],
                       "entries": entries}}
        with open(out_path, "w") as f:
            json.dump(har, f, indent=2, ensure_ascii=False)
            f.write("\n")
        print(f"{len(entries)} entries from {base}")
    finally:
        driver.quit()
        server.shutdown()


def headers(mapping):
    return [{"name": k, "value": v} for k, v in mapping.items()]


def entry(driver, rid, sent, received):
    request, response = sent["request"], received["response"]
    body = driver.execute_cdp_cmd("Network.getResponseBody", {"requestId": rid})
    url = request["url"]
    query = url.split("?", 1)[1] if "?" in url else ""
    timing = response.get("timing") or {}
    wait = max(0.0, timing.get("receiveHeadersEnd", 0) - timing.get("sendEnd", 0))
    started = datetime.fromtimestamp(sent["wallTime"], tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    har_request = {"method": request["method"], "url": url, "httpVersion": response.get("protocol", "http/1.1"),
                   "headers": headers(request["headers"]),
                   "queryString": [{"name": p.split("=", 1)[0], "value": p.split("=", 1)[1] if "=" in p else ""} for p in query.split("&") if p],
                   "cookies": [], "headersSize": -1, "bodySize": len(request.get("postData", "").encode())}
    if "postData" in request:
        har_request["postData"] = {"mimeType": request["headers"].get("Content-Type", ""), "text": request["postData"]}
    content = {"size": len(base64.b64decode(body["body"])) if body["base64Encoded"] else len(body["body"].encode()),
               "mimeType": response.get("mimeType", ""), "text": body["body"]}
    if body["base64Encoded"]:
        content["encoding"] = "base64"
    return {"_initiator": {"type": "script"}, "_priority": "High", "_resourceType": sent.get("type", "fetch").lower(),
            "cache": {}, "connection": str(response.get("connectionId", "")), "pageref": "page_1", "request": har_request,
            "response": {"status": response["status"], "statusText": response.get("statusText", ""),
                         "httpVersion": response.get("protocol", "http/1.1"), "headers": headers(response["headers"]),
                         "cookies": [], "content": content, "redirectURL": "", "headersSize": -1, "bodySize": -1,
                         "_transferSize": int(response.get("encodedDataLength", 0)), "_error": None},
            "serverIPAddress": response.get("remoteIPAddress", ""), "startedDateTime": started,
            "time": round(wait, 3),
            "timings": {"blocked": -1, "dns": -1, "ssl": -1, "connect": -1, "send": 0, "wait": round(wait, 3), "receive": 0}}


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
