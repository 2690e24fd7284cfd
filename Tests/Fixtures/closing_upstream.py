"""An upstream that drops every kept connection at its second request, on loopback only.

The first request on a connection is answered (200, keep-alive); the second is read
whole and then the connection is closed without a byte of answer — plainly (FIN), or
with `--reset` by an RST. This is the race a keep-alive timeout makes in real life: the
client reuses a connection at the moment the server gives it up.

Prints its port on the first line of stdout. `GET /stats` (sent on a connection of its
own, so always a first request) answers {"seen": {"METHOD id": count}, "dropped": N}:
every request that reached it, answered or not, by method and X-Request-Id."""
import json, signal, socket, socketserver, struct, sys, threading

SEEN = {}
DROPPED = [0]
LOCK = threading.Lock()
RESET = "--reset" in sys.argv


def read_request(stream):
    """(method, target, headers) and the body read, or None at EOF."""
    line = stream.readline()
    if not line:
        return None
    method, target, _ = line.decode("latin-1").split(" ", 2)
    headers = {}
    while True:
        h = stream.readline()
        if h in (b"\r\n", b"\n", b""):
            break
        name, value = h.decode("latin-1").split(":", 1)
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    if length:
        stream.read(length)
    return method, target, headers


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        served = 0
        while True:
            request = read_request(self.rfile)
            if request is None:
                return
            method, target, headers = request
            if target.endswith("/stats"):
                with LOCK:
                    body = json.dumps({"seen": SEEN, "dropped": DROPPED[0]}).encode()
            else:
                with LOCK:
                    key = method + " " + headers.get("x-request-id", "?")
                    SEEN[key] = SEEN.get(key, 0) + 1
                    if served >= 1:
                        DROPPED[0] += 1
                if served >= 1:
                    if RESET:
                        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    return
                body = json.dumps({"method": method, "n": served}).encode()
            head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
            self.wfile.write(head.encode() + (b"" if method == "HEAD" else body))
            self.wfile.flush()
            served += 1


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (ConnectionError, OSError)):
            return
        super().handle_error(request, client_address)


signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
signal.signal(signal.SIGTERM, signal.SIG_DFL)
server = Server(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
