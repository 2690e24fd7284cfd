#!/usr/bin/env python3
"""An OTLP/HTTP traces collector for the tests: each POSTed body is read by an independent
reader (opentelemetry-proto's ExportTraceServiceRequest through protobuf's strict
json_format.Parse) and its spans kept; GET /spans returns them as plain JSON.

Usage: otlp_receiver.py [--slow SECONDS]   (prints its port first)
  --slow: every POST is answered only after SECONDS (a collector that hangs).
"""
import base64
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

SLOW = float(sys.argv[sys.argv.index("--slow") + 1]) if "--slow" in sys.argv else 0.0
LOCK = threading.Lock()
SPANS = []
ERRORS = []
BODIES = [0]


def hex_ids_to_base64(doc):
    # OTLP/JSON writes ids as hex where protobuf's JSON mapping of `bytes` wants base64
    # (the OTLP specification's one deviation): decode them as its readers do.
    for resource in doc.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        raw = bytes.fromhex(span[key])
                        span[key] = base64.b64encode(raw).decode()


def value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


def plain(message):
    out = []
    for resource in message.resource_spans:
        service = {a.key: value(a.value) for a in resource.resource.attributes}.get("service.name")
        for scope in resource.scope_spans:
            for s in scope.spans:
                out.append({
                    "service": service, "scope": scope.scope.name,
                    "traceId": s.trace_id.hex(), "spanId": s.span_id.hex(), "parentSpanId": s.parent_span_id.hex(),
                    "traceIdBytes": len(s.trace_id), "spanIdBytes": len(s.span_id), "parentSpanIdBytes": len(s.parent_span_id),
                    "traceState": s.trace_state, "name": s.name, "kind": s.kind,
                    "start": s.start_time_unix_nano, "end": s.end_time_unix_nano,
                    "attributes": {a.key: value(a.value) for a in s.attributes},
                    "events": [{"name": e.name, "time": e.time_unix_nano, "attributes": {a.key: value(a.value) for a in e.attributes}}
                               for e in s.events],
                    "status": {"code": s.status.code, "message": s.status.message},
                })
    return out


class Receiver(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if SLOW:
            time.sleep(SLOW)
        try:
            if self.headers.get("Content-Type") != "application/json":
                raise ValueError("Content-Type is %r" % self.headers.get("Content-Type"))
            doc = json.loads(body)
            hex_ids_to_base64(doc)
            message = ExportTraceServiceRequest()
            json_format.Parse(json.dumps(doc), message, ignore_unknown_fields=False)
            spans = plain(message)
            with LOCK:
                BODIES[0] += 1
                SPANS.extend(spans)
        except Exception as error:  # kept for the test to report
            with LOCK:
                ERRORS.append("%s: %s" % (type(error).__name__, error))
            return self.reply(400, b'{"error":"unreadable"}')
        self.reply(200, b"{}")

    def do_GET(self):
        with LOCK:
            doc = {"bodies": BODIES[0], "errors": ERRORS, "spans": SPANS}
        self.reply(200, json.dumps(doc).encode())


server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
