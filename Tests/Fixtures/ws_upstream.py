"""A WebSocket upstream for serializerd's WebSocket tests (loopback only; RFC 6455 by hand).

Prints its port on the first line of stdout, then one line per thing a test waits for:
  `headers <json>`       the handshake's fields, lower-cased names
  `closed <path> <how>`  how a connection ended: `code=<n>` (a close frame came) or `gone`
Paths, after the handshake (the query tunes them):
  /echo     each message back as it came (fragmented ones reassembled), `delay` s later; ping → pong;
            a close frame → the same close frame, then the end
  /script   sends `m` (JSON list of [opcode, text]) at once, then echoes
  /frag     a text message of `parts` fragments with a ping between them, then echoes
  /big      one binary message of `size` bytes, then echoes
  /close    a close frame with `code` (raw: `raw=1` sends `code` as given), then waits
  /vanish   closes the connection without a close frame
  /silent   nothing; waits for the client
  /flood    binary messages of 64 KiB as fast as the socket takes them, up to `mb` MiB;
            `/sent` (plain HTTP) answers {"flood": bytes written so far}
  /masked   a masked frame (a server must not mask)
With `--tls CERT KEY` it speaks TLS (wss). Other handshakes: /refuse answers 403 with a JSON body (chunked when `chunked=1`);
/badaccept answers 101 with a wrong Sec-WebSocket-Accept."""
import base64, hashlib, json, os, socket, struct, threading, time
from urllib.parse import urlparse, parse_qs

from loopback_server import serve

PRINTING = threading.Lock()


def say(*parts):
    """One whole line, never interleaved with another connection's."""
    with PRINTING:
        print(*parts, flush=True)

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
SENT = {"flood": 0}


def frame(opcode, payload, fin=True, mask=False):
    head = bytes([(0x80 if fin else 0) | opcode])
    n = len(payload)
    bit = 0x80 if mask else 0
    if n < 126:
        head += bytes([bit | n])
    elif n < 65536:
        head += bytes([bit | 126]) + struct.pack(">H", n)
    else:
        head += bytes([bit | 127]) + struct.pack(">Q", n)
    if mask:
        key = os.urandom(4)
        payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
        head += key
    return head + payload


class Client(threading.Thread):
    def __init__(self, sock):
        super().__init__(daemon=True)
        self.sock = sock
        self.buf = b""

    def recv_exact(self, n):
        while len(self.buf) < n:
            more = self.sock.recv(65536)
            if not more:
                raise EOFError
            self.buf += more
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read_frame(self):
        b0, b1 = self.recv_exact(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", self.recv_exact(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self.recv_exact(8))[0]
        key = self.recv_exact(4) if b1 & 0x80 else None
        payload = self.recv_exact(n)
        if key:
            payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
        return b0 & 0x80 != 0, b0 & 0x0F, payload, key is not None

    def run(self):
        path = "?"
        try:
            head = b""
            while b"\r\n\r\n" not in head:
                more = self.sock.recv(65536)
                if not more:
                    return
                head += more
            head, self.buf = head.split(b"\r\n\r\n", 1)
            lines = head.decode().split("\r\n")
            target = lines[0].split(" ")[1]
            fields = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                fields[name.strip().lower()] = value.strip()
            url = urlparse(target)
            path = url.path.rsplit("/", 1)[-1]
            q = {k: v[0] for k, v in parse_qs(url.query).items()}
            if path == "sent":
                body = json.dumps(SENT).encode()
                self.sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
                return
            if path == "login":
                body = b'{"ok":true}'
                self.sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nSet-Cookie: session=abc; Path=/\r\n"
                                  b"Set-Cookie: elsewhere=no; Path=/other\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
                return
            say("headers", json.dumps(fields))
            if path == "refuse":
                body = b'{"error":"no sockets for you","n":1.50}'
                if q.get("chunked"):
                    self.sock.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                                      + b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n")
                else:
                    self.sock.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
                return
            accept = base64.b64encode(hashlib.sha1(fields["sec-websocket-key"].encode() + GUID).digest())
            if path == "badaccept":
                accept = base64.b64encode(b"x" * 20)
            # setcookie: the 101 sets a cookie and drops the session's.
            cookies = b"Set-Cookie: fresh=new1; Path=/\r\nSet-Cookie: session=; Max-Age=0; Path=/\r\n" if path == "setcookie" else b""
            self.sock.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" + cookies
                              + b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n")
            getattr(self, "do_" + path, self.echo)(q)
        except (EOFError, BrokenPipeError, ConnectionResetError):
            say("closed", path, "gone")
        except OSError:
            say("closed", path, "gone")
        finally:
            self.sock.close()

    def echo(self, q=None, path="echo"):
        delay = float((q or {}).get("delay", 0))
        message, kind = b"", None
        while True:
            fin, opcode, payload, masked = self.read_frame()
            if not masked:
                say("closed", path, "unmasked")
                return
            if opcode == 8:
                code = struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else 1005
                say("closed", path, "code=%d" % code)
                self.sock.sendall(frame(8, payload))
                return
            if opcode == 9:
                self.sock.sendall(frame(10, payload))
                continue
            if opcode == 10:
                continue
            if opcode != 0:
                kind = opcode
            message += payload
            if fin:
                if delay:
                    time.sleep(delay)
                self.sock.sendall(frame(kind, message))
                message = b""

    def do_script(self, q):
        for opcode, text in json.loads(q.get("m", "[]")):
            self.sock.sendall(frame(opcode, text.encode()))
        self.echo(q, path="script")

    def do_frag(self, q):
        parts = int(q.get("parts", 3))
        text = json.dumps({"parts": parts, "x": 2.50, "z": None}).encode()
        step = max(1, len(text) // parts)
        pieces = [text[i * step:(i + 1) * step] for i in range(parts - 1)] + [text[(parts - 1) * step:]]
        for i, piece in enumerate(pieces):
            self.sock.sendall(frame(1 if i == 0 else 0, piece, fin=i == parts - 1))
            if i < parts - 1:
                self.sock.sendall(frame(9, b"between"))
        self.echo(path="frag")

    def do_big(self, q):
        self.sock.sendall(frame(2, b"b" * int(q.get("size", 1024))))
        self.echo(path="big")

    def do_close(self, q):
        code = int(q.get("code", 1000))
        self.sock.sendall(frame(8, struct.pack(">H", code) + b"bye"))
        self.echo(path="close")

    def do_vanish(self, q):
        self.sock.shutdown(socket.SHUT_RDWR)

    def do_silent(self, q):
        self.echo(path="silent")

    def do_masked(self, q):
        self.sock.sendall(frame(1, b"masked", mask=True))
        self.echo(path="masked")

    def do_flood(self, q):
        limit = int(q.get("mb", 100)) << 20
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
        block = frame(2, b"x" * 65536)
        while SENT["flood"] < limit:
            self.sock.sendall(block)
            SENT["flood"] += 65536
        self.echo(path="flood")


def main():
    serve(lambda sock: Client(sock).start())


if __name__ == "__main__":
    main()
