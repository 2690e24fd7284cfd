"""An SSE origin for bench/streams.sh (loopback only). Prints its port, then serves:
  /tick?gap_ms=G&size=S   an event of about S bytes every G ms until the client leaves;
                          each event's data carries "t", the monotonic ns it was written
  /fast?size=S&count=N    N events of about S bytes as fast as the socket takes them
  /flood?mb=M             M MiB of application/octet-stream as fast as it is taken;
                          the bytes written so far go to stdout as `flood N` lines"""
import asyncio, json, sys, time

PAD = "x" * 4096


def event(size, t):
    body = json.dumps({"t": t, "kind": "tick", "values": [1.25, 2.5, 3.75], "pad": ""})
    return json.dumps({"t": t, "kind": "tick", "values": [1.25, 2.5, 3.75], "pad": PAD[: max(0, size - len(body))]})


async def handle(reader, writer):
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        target = head.split(b" ", 2)[1].decode()
        path, _, query = target.partition("?")
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
