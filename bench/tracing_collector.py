#!/usr/bin/env python3
"""An OTLP/HTTP collector for the tracing bench: takes each POST, counts its spans (by
their `"spanId"` keys) and answers 200; GET returns {"bodies": N, "spans": N}.
Usage: tracing_collector.py PORT"""
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
COUNTS = {"bodies": 0, "spans": 0}


class Collector(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The head and the body go in two writes: with Nagle's algorithm the second waits for
    # the client's delayed ACK (40 ms a POST), and the exporter, which sends one batch at
    # a time, falls behind and drops.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def answer(self, body):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with LOCK:
            COUNTS["bodies"] += 1
            COUNTS["spans"] += body.count(b'"spanId"')
        self.answer(b"{}")

    def do_GET(self):
        with LOCK:
            text = '{"bodies": %d, "spans": %d}' % (COUNTS["bodies"], COUNTS["spans"])
        self.answer(text.encode())


server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Collector)
server.daemon_threads = True
server.serve_forever()
