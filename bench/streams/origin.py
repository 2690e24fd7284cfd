"""An SSE origin for bench/streams.sh (loopback only). Prints its port, then serves:
  /tick?gap_ms=G&size=S   an event of about S bytes every G ms until the client leaves;
                          each event's data carries "t", the monotonic ns it was written
  /fast?size=S&count=N    N events of about S bytes as fast as the socket takes them
  /flood?mb=M             M MiB of application/octet-stream as fast as it is taken;
                          the bytes written so far go to stdout as `flood N` lines
  /ws                     a WebSocket: each message back as it came"""
import asyncio, base64, hashlib, json, struct, sys, time

PAD = "x" * 4096


def event(size, t):
    body = json.dumps({"t": t, "kind": "tick", "values": [1.25, 2.5, 3.75], "pad": ""})
    return json.dumps({"t": t, "kind": "tick", "values": [1.25, 2.5, 3.75], "pad": PAD[: max(0, size - len(body))]})


async def websocket(head, reader, writer):
    key = [l.split(b":", 1)[1].strip() for l in head.split(b"\r\n") if l.lower().startswith(b"sec-websocket-key:")][0]
    accept = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
    writer.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n")
    while True:
        b0, b1 = await reader.readexactly(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", await reader.readexactly(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", await reader.readexactly(8))[0]
        mask = await reader.readexactly(4) if b1 & 0x80 else b"\0\0\0\0"
        payload = await reader.readexactly(n)
        if n:
            # Unmasked in one big-integer XOR: a byte loop in Python would be the bench.
            payload = (int.from_bytes(payload, "big") ^ int.from_bytes((mask * (n // 4 + 1))[:n], "big")).to_bytes(n, "big")
        if b0 & 0x0F == 8:
            writer.write(bytes([0x88, len(payload)]) + payload)
            return
        head = bytes([b0 & 0x8F]) + (bytes([n]) if n < 126 else bytes([126]) + struct.pack(">H", n) if n < 65536 else bytes([127]) + struct.pack(">Q", n))
        writer.write(head + payload)


async def handle(reader, writer):
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        target = head.split(b" ", 2)[1].decode()
        path, _, query = target.partition("?")
        if path.endswith("/ws"):
            return await websocket(head, reader, writer)
        q = dict(part.split("=", 1) for part in query.split("&") if "=" in part)
        size = int(q.get("size", 1024))
        kind = b"application/octet-stream" if path.endswith("/flood") else b"text/event-stream"
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: " + kind + b"\r\nTransfer-Encoding: chunked\r\n\r\n")
        if path.endswith("/flood"):
            limit, block, sent = int(q.get("mb", 100)) << 20, b"x" * 65536, 0
            writer.transport.set_write_buffer_limits(high=65536)
            while sent < limit:
                writer.write(b"%x\r\n" % len(block) + block + b"\r\n")
                await writer.drain()
                sent += len(block)
                print("flood", sent, flush=True)
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        elif path.endswith("/fast"):
            count, batch = int(q.get("count", 100000)), 64
            block = "".join("data: " + event(size, 0) + "\n\n" for _ in range(batch)).encode()
            chunk = b"%x\r\n" % len(block) + block + b"\r\n"
            for _ in range(count // batch):
                writer.write(chunk)
                await writer.drain()
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        else:
            gap = int(q.get("gap_ms", 10)) / 1000
            while True:
                data = ("data: " + event(size, time.monotonic_ns()) + "\n\n").encode()
                writer.write(b"%x\r\n" % len(data) + data + b"\r\n")
                await writer.drain()
                await asyncio.sleep(gap)
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=4096)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
