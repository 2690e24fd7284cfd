"""A real upstream for serializerd's end-to-end tests, on loopback only.

Prints its port on the first line of stdout, then serves until killed. Each path
is a scenario (see `routes`); query parameters tune it."""
import email.utils, gzip, json, random, signal, socket, struct, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse, parse_qs


CACHE = {}
CACHE_LOCK = threading.Lock()
# `gate`: requests in flight now, the most at once, and the order `tag`s arrived in.
GATE = {"now": 0, "most": 0, "order": []}
GATE_LOCK = threading.Lock()
# `limited`: by `key`, the times of the requests it served and how many it refused.
LIMITED = {}
LIMITED_LOCK = threading.Lock()
# `flaky`: requests seen by `key`.
FLAKY = {}
# ... and the traceparent each of them carried.
FLAKY_TRACES = {}
FLAKY_LOCK = threading.Lock()


class Stub(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body leave in separate writes; with Nagle on, keep-alive clients wait
    # for a delayed ACK (~40 ms) on every response.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def reply(self, status, body, ctype="application/json", extra=()):
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def date_time_string(self, timestamp=None):
        # `date=TEXT` replaces the Date header's value (an upstream's own, valid or not).
        return getattr(self, "fixed_date", None) or super().date_time_string(timestamp)

    def handle_any(self):
        url = urlparse(self.path)
        q = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        self.fixed_date = q.get("date")
        # `h=Name:value` (repeatable) adds response headers to the json scenario.
        added = [tuple(part.strip() for part in h.split(":", 1)) for h in parse_qs(url.query).get("h", [])]
        # A cookie to set, from a request header (a secret never in the URL).
        if self.headers.get("X-Echo-Set-Cookie"):
            added.append(("Set-Cookie", self.headers["X-Echo-Set-Cookie"]))
        # `setcookies=N`: N cookies at once; `bigcookie=N`: one with an N-byte value.
        added += [("Set-Cookie", "c%d=%d; Path=/" % (i, i)) for i in range(int(q.get("setcookies", "0")))]
        if "bigcookie" in q:
            added.append(("Set-Cookie", "big=" + "v" * int(q["bigcookie"]) + "; Path=/"))
        name = url.path.rstrip("/").split("/")[-1]
        segments = url.path.rstrip("/").split("/")
        if len(segments) >= 3 and segments[-2] in ("cached", "cachestate", "cachemode"):
            return self.cached(segments[-2], name, q)
        status = int(q.get("status", 200))
        ctype = q.get("type", "application/json")
        if name == "echo":
            doc = {"method": self.command, "path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                   "body": self.body().decode("utf-8", "replace")}
            return self.reply(status, json.dumps(doc).encode())
        self.body()
        if name == "json":
            return self.reply(status, q.get("body", '{"a": [1, 2.50, null], "b": "x\\/y"}').encode(), ctype,
                              [("Cache-Control", "max-age=60"), ("ETag", '"v1"'), ("Vary", "Accept"), ("X-Other", "1"),
                               ("Keep-Alive", "timeout=5")] + added)
        if name == "xml":
            return self.reply(status, b'<?xml version="1.0"?><rss><channel><item><t>a</t></item></channel></rss>', "application/xml")
        if name == "plist":
            return self.reply(status, b'<?xml version="1.0"?><plist version="1.0"><dict><key>k</key><integer>7</integer></dict></plist>',
                              "application/x-plist")
        if name == "png":
            with open(q["file"], "rb") as f:
                return self.reply(status, f.read(), "image/png")
        if name == "file":
            time.sleep(float(q.get("delay", "0")))
            with open(q["path"], "rb") as f:
                return self.reply(status, f.read(), q.get("type", "application/octet-stream"), added)
        if name == "deepform":
            depth = int(q.get("depth", "8000"))
            return self.reply(status, ("a" + "[b]" * (depth - 1) + "=1").encode(), "application/x-www-form-urlencoded")
        if name == "text":
            return self.reply(status, "caf\u00e9".encode("latin-1"), "text/plain; charset=iso-8859-1")
        if name == "form":
            return self.reply(status, b"a=1&b[]=x&c[d]=y", "application/x-www-form-urlencoded")
        if name == "empty":
            return self.reply(int(q.get("status", 204)), b"", None if "notype" in q else ctype)
        if name == "space":
            return self.reply(status, b" ", ctype)
        if name == "trickle":
            # `bytes` of JSON string over `seconds`, in twenty writes, Content-Length known.
            total, seconds = int(q.get("bytes", "100000")), float(q.get("seconds", "2"))
            body = b'"' + b"x" * (total - 2) + b'"'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(total))
            self.end_headers()
            step = -(-total // 20)
            for at in range(0, total, step):
                self.wfile.write(body[at:at + step])
                self.wfile.flush()
                time.sleep(seconds / 20)
            return
        if name == "sse":
            # `n` events 50 ms apart, each with a password, then the connection's end.
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            for i in range(int(q.get("n", "3"))):
                self.wfile.write(b'event: tick\ndata: {"i": %d, "password": "hunter2"}\n\n' % i)
                self.wfile.flush()
                time.sleep(0.05)
            self.close_connection = True
            return
        if name == "gate":
            # Counts requests in flight (`seconds` each) and the order their `tag`s came in.
            with GATE_LOCK:
                GATE["now"] += 1
                GATE["most"] = max(GATE["most"], GATE["now"])
                GATE["order"].append(q.get("tag", ""))
            time.sleep(float(q.get("seconds", "0.2")))
            with GATE_LOCK:
                GATE["now"] -= 1
            return self.reply(status, b'{"gate":true}')
        if name == "limited":
            # A scripted origin: 429 with `Retry-After: 1` beyond `limit` requests in any
            # second (a sliding window, the strictest count), else 200.
            now = time.monotonic()
            limit = int(q.get("limit", "10"))
            with LIMITED_LOCK:
                seen = LIMITED.setdefault(q.get("key", ""), {"served": [], "refused": 0})
                over = sum(1 for t in seen["served"] if t > now - 1.0) >= limit
                if over:
                    seen["refused"] += 1
                else:
                    seen["served"].append(now)
            if over:
                return self.reply(429, b'{"limited":true}', extra=[("Retry-After", "1")])
            return self.reply(status, b'{"served":true}')
        if name == "flaky":
            # Fails the first `fail` requests of `key` (or each with chance `chance`): with
            # `fail_status` (503), or `mode=reset` drops the connection before answering.
            with FLAKY_LOCK:
                seen = FLAKY[q.get("key", "")] = FLAKY.get(q.get("key", ""), 0) + 1
                FLAKY_TRACES.setdefault(q.get("key", ""), []).append(self.headers.get("traceparent"))
            failing = random.random() < float(q["chance"]) if "chance" in q else seen <= int(q.get("fail", "1"))
            if failing and q.get("mode") == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True
                return
            if failing:
                return self.reply(int(q.get("fail_status", "503")), b'{"flaky":true}', extra=added)
            return self.reply(200, b'{"ok":%d}' % seen)
        if name == "flakystats":
            with FLAKY_LOCK:
                return self.reply(200, json.dumps({"seen": FLAKY.get(q.get("key", ""), 0),
                                                   "traceparents": FLAKY_TRACES.get(q.get("key", ""), [])}).encode())
        if name == "limitedstats":
            # What `limited` did for `key`: served, refused, and the most served in any second.
            with LIMITED_LOCK:
                seen = LIMITED.get(q.get("key", ""), {"served": [], "refused": 0})
                served = seen["served"]
                busiest = max((sum(1 for u in served if t <= u < t + 1.0) for t in served), default=0)
                doc = {"served": len(served), "refused": seen["refused"], "busiest": busiest,
                       "times": [t - served[0] for t in served]}
            return self.reply(200, json.dumps(doc).encode())
        if name == "gatestats":
            with GATE_LOCK:
                return self.reply(status, json.dumps(GATE).encode())
        if name == "slow":
            time.sleep(float(q.get("seconds", "2")))
            return self.reply(status, b'{"slow":true}')
        if name == "big":
            return self.reply(status, b'"' + b"x" * int(q.get("bytes", "100")) + b'"')
        if name == "gzip":
            data = gzip.compress(b'{"zipped":true}')
            return self.reply(status, data, "application/json", [("Content-Encoding", "gzip")])
        if name == "loop":
            return self.reply(302, b"", None, [("Location", self.path)])
        if name == "redirect":
            return self.reply(302, b"", None, [("Location", q.get("to", "/v1/json"))])
        if name == "garbage":
            self.wfile.write(b"this is not HTTP at all\r\n\r\n")
            self.close_connection = True
            return
        if name == "reset":
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"partial\":")
            self.wfile.flush()
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        return self.reply(404, b'{"error":"no such scenario"}')

    def cached(self, kind, key, q):
        """A resource that counts its requests, for the cache's tests.

        /v1/cached/KEY answers {"key", "n" (requests so far), "v" (version), "who"} with
        `cc=` as Cache-Control (default max-age=60; empty: none), `exp=` seconds from now as
        Expires, ETag "vN" (`noetag` drops it), `lm=`
        as Last-Modified, `vary=` as Vary, `cookie` a Set-Cookie, `delay=` seconds first;
        a matching If-None-Match gets 304. /v1/cachemode/KEY?mode=json|html|503|moved304&v=N sets
        how it answers from then on; /v1/cachestate/KEY tells the counts and the
        conditional headers seen."""
        with CACHE_LOCK:
            state = CACHE.setdefault(key, {"requests": 0, "not_modified": 0, "mode": "json", "v": 1, "conditionals": []})
            if kind == "cachemode":
                state["mode"] = q.get("mode", state["mode"])
                state["v"] = int(q.get("v", state["v"]))
                return self.reply(200, json.dumps(state).encode())
            if kind == "cachestate":
                return self.reply(200, json.dumps(state).encode())
            state["requests"] += 1
            n, mode, version = state["requests"], state["mode"], state["v"]
            inm, ims = self.headers.get("If-None-Match"), self.headers.get("If-Modified-Since")
            if inm or ims:
                state["conditionals"].append({"if_none_match": inm, "if_modified_since": ims})
        self.body()
        time.sleep(float(q.get("delay", "0")))
        etag = '"v%d"' % version
        extra = [("Cache-Control", q.get("cc", "max-age=60"))] if q.get("cc", "max-age=60") else []
        if "exp" in q:
            extra.append(("Expires", email.utils.formatdate(time.time() + float(q["exp"]), usegmt=True)))
        if "noetag" not in q:
            extra.append(("ETag", etag))
        if "lm" in q:
            extra.append(("Last-Modified", q["lm"]))
        if "vary" in q:
            extra.append(("Vary", q["vary"]))
        if "cookie" in q:
            extra.append(("Set-Cookie", "session=abc"))
        if mode == "503":
            return self.reply(503, b'{"error":"down"}', "application/json", extra)
        # mode=moved304: every conditional request gets a 304 naming the current version,
        # whatever it asked about (a 304 for another representation, RFC 9111 §4.3.4).
        if mode == "moved304" and (inm or ims):
            return self.reply(304, b"", None, extra)
        if inm is not None and inm == etag and "noetag" not in q:
            with CACHE_LOCK:
                state["not_modified"] += 1
            return self.reply(304, b"", None, extra)
        if mode == "html":
            return self.reply(200, b"<html><body>Service temporarily broken</body></html>", "text/html", extra)
        doc = {"key": key, "n": n, "v": version,
               "who": self.headers.get("Authorization") or self.headers.get("X-User") or self.headers.get("Cookie")}
        return self.reply(200, json.dumps(doc).encode(), "application/json", extra)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = handle_any

    def __getattr__(self, name):
        # Any other method (PROPFIND, lowercase get, ...) is served like the rest.
        if name.startswith("do_"):
            return self.handle_any
        raise AttributeError(name)


# The test runner's blocked signals are inherited; SIGTERM must stop the stub.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
signal.signal(signal.SIGTERM, signal.SIG_DFL)
class Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # The daemon closing a connection mid-reply (a timeout, a refused body, shutdown) is
        # part of the tests, not a fault of the stub: no traceback for it.
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


server = Server(("127.0.0.1", 0), Stub)
server.daemon_threads = True
# `--tls CERT KEY [--client-ca CA]`: HTTPS, and with a client CA, mutual TLS.
if "--tls" in sys.argv:
    import ssl
    at = sys.argv.index("--tls")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[at + 1], sys.argv[at + 2])
    if "--client-ca" in sys.argv:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(sys.argv[sys.argv.index("--client-ca") + 1])
    if "--tls12" in sys.argv:
        context.maximum_version = ssl.TLSVersion.TLSv1_2
    server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
