"""Stream clients for bench/streams.sh (loopback only).
  client.py latency URL STREAMS SECONDS   per-event latency (write at the origin to read
                                          here), p50/p99 in µs, and the events read
  client.py rate URL SECONDS              one stream read as fast as it comes: events/s
  client.py hold URL STREAMS SECONDS      open STREAMS streams, keep them SECONDS
  client.py slow URL RATE SECONDS         one stream read at RATE bytes a second"""
import asyncio, re, sys, time

T = re.compile(rb'"t":\s*(\d+)')


async def open_stream(url):
    host, port, path = re.match(r"http://([^:/]+):(\d+)(/.*)", url).groups()
    reader, writer = await asyncio.open_connection(host, int(port), limit=1 << 22)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
    await reader.readuntil(b"\r\n\r\n")
    return reader, writer


async def latency(url, streams, seconds):
    samples, stop = [], time.monotonic() + seconds

    async def one():
        reader, writer = await open_stream(url)
        try:
            while time.monotonic() < stop:
                line = await reader.readline()
                if not line:
                    break
                if line.startswith(b"data:"):
                    now = time.monotonic_ns()
                    m = T.search(line)
                    if m:
                        samples.append((now - int(m.group(1))) / 1000)
        finally:
            writer.close()
    await asyncio.gather(*(one() for _ in range(streams)))
    samples.sort()
    n = len(samples)
    print(f"events {n} p50_us {samples[n // 2]:.1f} p99_us {samples[int(n * 0.99)]:.1f}")


async def rate(url, seconds):
    reader, writer = await open_stream(url)
    count, start = 0, time.monotonic()
    while time.monotonic() - start < seconds:
        block = await reader.read(1 << 20)
        if not block:
            break
        count += block.count(b"\ndata:") + block.count(b"data:", 0, 5)
    elapsed = time.monotonic() - start
    writer.close()
    print(f"events {count} per_second {count / elapsed:.0f}")


async def hold(url, streams, seconds):
    opened = await asyncio.gather(*(open_stream(url) for _ in range(streams)))
    print("open", len(opened), flush=True)
    await asyncio.sleep(seconds)
    for _, writer in opened:
        writer.close()


async def slow(url, rate, seconds):
    reader, writer = await open_stream(url)
    got, start = 0, time.monotonic()
    while time.monotonic() - start < seconds:
        got += len(await reader.read(rate // 10))
        await asyncio.sleep(0.1)
    writer.close()
    print(f"read {got}")


mode = sys.argv[1]
if mode == "latency":
    asyncio.run(latency(sys.argv[2], int(sys.argv[3]), float(sys.argv[4])))
elif mode == "rate":
    asyncio.run(rate(sys.argv[2], float(sys.argv[3])))
elif mode == "slow":
    asyncio.run(slow(sys.argv[2], int(sys.argv[3]), float(sys.argv[4])))
else:
    asyncio.run(hold(sys.argv[2], int(sys.argv[3]), float(sys.argv[4])))
