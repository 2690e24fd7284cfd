"""An upstream that answers over time, for serializerd's stream tests (loopback only).

Prints its port on the first line of stdout, then `closed <scenario>` whenever a client
went away mid-answer. Each path is a scenario; the query tunes it:
  /sse      n events `gap` s apart; kind=json|bad|mixed|text|secret; eol=lf|crlf|cr;
            comment=1 (a keep-alive first); done=1 (a last `data: [DONE]`); end=close|reset|hang
  /ndjson   n records; kind=json|bad|mixed; seq=1 (application/json-seq); end as above
  /bytes    size bytes of application/octet-stream (Content-Length), chunk bytes a write
  /silent   an SSE head, then nothing until the client leaves
  /endless  an SSE event every `gap` s until the client leaves
  /flood    application/octet-stream as fast as the socket takes it, up to `mb` MiB
  /sent     {"flood": bytes written so far by /flood}
  /huge     one SSE data line of `mb` MiB with no line end for its length, then a small event
  /nested   an SSE event whose data is `depth` nested JSON arrays (about 2 × depth bytes)
  /status   n: an SSE content type with that status and a short body; hang=1: the body
            never ends"""
import json, socket, struct, threading, time
from urllib.parse import urlparse, parse_qs

from loopback_server import serve

SENT = {"flood": 0, "endless": 0}


def event(i, kind):
    if kind == "secret":
        return json.dumps({"i": i, "secret": "hunter2", "z": None})
    if kind == "text":
        return f"line one {i}\nline two {i}"
    bad = kind == "bad" or (kind == "mixed" and i % 2 == 1)
    return "{not json" if bad else json.dumps({"i": i, "b": 1.50, "nested": {"z": None}})


class Client(threading.Thread):
    def __init__(self, sock):
        super().__init__(daemon=True)
        self.sock = sock

    def send(self, data):
        self.sock.sendall(data)

    def chunk(self, data):
        self.send(b"%x\r\n" % len(data) + data + b"\r\n")

    def head(self, status, ctype, extra=b""):
        self.send(b"HTTP/1.1 %d X\r\nContent-Type: %s\r\n%s\r\n" % (status, ctype.encode(), extra))

    def closed(self, name):
        print("closed", name, flush=True)

    def ending(self, end, name):
        if end == "reset":
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        elif end == "hang":
            self.wait_gone(name)
        else:
            self.send(b"0\r\n\r\n")

    def wait_gone(self, name):
        self.sock.settimeout(None)
        try:
            while self.sock.recv(4096):
                pass
        except OSError:
            pass
        self.closed(name)

    def run(self):
        try:
            data = b""
            while b"\r\n\r\n" not in data:
                more = self.sock.recv(65536)
                if not more:
                    return
                data += more
            target = data.split(b" ", 2)[1].decode()
            url = urlparse(target)
            q = {k: v[0] for k, v in parse_qs(url.query).items()}
            getattr(self, "do_" + url.path.rsplit("/", 1)[-1], self.do_missing)(q)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            self.sock.close()

    def do_missing(self, q):
        self.send(b"HTTP/1.1 404 X\r\nContent-Length: 0\r\n\r\n")

    def do_sse(self, q):
        n, gap, kind = int(q.get("n", 5)), float(q.get("gap", 0)), q.get("kind", "json")
        eol = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}[q.get("eol", "lf")]
        self.head(200, "text/event-stream", b"Transfer-Encoding: chunked\r\n")
        if q.get("comment"):
            self.chunk((": keep-alive" + eol).encode())
        for i in range(n):
            lines = [f"id: {i}", "event: tick"] + ["data: " + part for part in event(i, kind).split("\n")]
            self.chunk((eol.join(lines) + eol + eol).encode())
            if gap:
                time.sleep(gap)
        if q.get("done"):
            self.chunk(("data: [DONE]" + eol + eol).encode())
        self.ending(q.get("end", "close"), "sse")

    def do_ndjson(self, q):
        n, gap, kind = int(q.get("n", 5)), float(q.get("gap", 0)), q.get("kind", "json")
        seq = q.get("seq") == "1"
        self.head(200, "application/json-seq" if seq else "application/x-ndjson", b"Transfer-Encoding: chunked\r\n")
        for i in range(n):
            self.chunk(("\x1e" if seq else "").encode() + event(i, kind).encode() + b"\n")
            if gap:
                time.sleep(gap)
        self.ending(q.get("end", "close"), "ndjson")

    def do_bytes(self, q):
        size, step = int(q.get("size", 1 << 20)), int(q.get("chunk", 65536))
        self.head(200, "application/octet-stream", b"Content-Length: %d\r\n" % size)
        sent = 0
        while sent < size:
            part = min(step, size - sent)
            self.send(bytes((sent + k) % 251 for k in range(part)))
            sent += part

    def do_silent(self, q):
        self.head(200, "text/event-stream", b"Transfer-Encoding: chunked\r\n")
        self.wait_gone("silent")

    def do_endless(self, q):
        gap, pad = float(q.get("gap", 0.05)), b"x" * int(q.get("pad", 0))
        self.head(200, "text/event-stream", b"Transfer-Encoding: chunked\r\n")
        i = 0
        try:
            while True:
                self.chunk(b"data: {\"i\": %d, \"pad\": \"%s\"}\n\n" % (i, pad) if pad else b"data: {\"i\": %d}\n\n" % i)
                i += 1
                SENT["endless"] = i
                time.sleep(gap)
        except OSError:
            self.closed("endless")

    def do_flood(self, q):
        limit = int(q.get("mb", 100)) << 20
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
        self.head(200, "application/octet-stream", b"Content-Length: %d\r\n" % limit)
        block = b"x" * 65536
        try:
            while SENT["flood"] < limit:
                self.send(block)
                SENT["flood"] += len(block)
        except OSError:
            self.closed("flood")

    def do_sent(self, q):
        body = json.dumps(SENT).encode()
        self.send(b"HTTP/1.1 200 X\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)

    def do_huge(self, q):
        self.head(200, "text/event-stream", b"Transfer-Encoding: chunked\r\n")
        self.chunk(b"data: ")
        block = b"x" * 65536
        for _ in range(int(q.get("mb", 10)) * 16):
            self.chunk(block)
        self.chunk(b'\n\ndata: {"after": 1}\n\n')
        self.ending("close", "huge")

    def do_nested(self, q):
        depth = int(q.get("depth", 500000))
        self.head(200, "text/event-stream", b"Transfer-Encoding: chunked\r\n")
        self.chunk(b"data: " + b"[" * depth + b"]" * depth + b'\n\ndata: {"after": 1}\n\n')
        self.ending("close", "nested")

    def do_status(self, q):
        body = b'{"error":"nope"}'
        if q.get("hang"):
            # An error answer that never ends: its body so far, then silence.
            self.head(int(q.get("n", 500)), "text/event-stream", b"Transfer-Encoding: chunked\r\n")
            self.chunk(b"data: " + body + b"\n\n")
            return self.wait_gone("status")
        self.send(b"HTTP/1.1 %d X\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n" % (int(q.get("n", 500)), len(body)) + body)


def main():
    serve(lambda sock: Client(sock).start())


if __name__ == "__main__":
    main()
