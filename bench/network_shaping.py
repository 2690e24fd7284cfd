#!/usr/bin/env python3
"""Network conditions measured from a client: time to first byte against `latency`,
throughput against `down` on a 10 MB reply (fresh and kept connections), and the latency
of unslowed requests on a worker that holds 1,000 slowed ones (against the same worker
holding none, in the same run). Loopback only; every process started here is stopped by PID.

    bench/network_shaping.py [--binary .build/release/serializerd] [--reps 10] [--held 1000] [--parts ttfb,rate,held]
"""
import argparse, os, resource, socket, statistics, sys, time
import processes

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("--binary", default=os.path.join(here, "..", ".build", "release", "serializerd"))
ap.add_argument("--reps", type=int, default=10)
ap.add_argument("--held", type=int, default=1000)
ap.add_argument("--probes", type=int, default=2000)
ap.add_argument("--parts", default="ttfb,rate,held", help="which measurements, comma-separated")
args = ap.parse_args()
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def connect(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def exchange(s, target, headers=""):
    """One request on `s`; (seconds to the first byte, seconds from the first to the last, body bytes)."""
    sent = time.perf_counter()
    s.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}\r\n".encode())
    data = s.recv(65536)
    first = time.perf_counter()
    while b"\r\n\r\n" not in data:
        data += s.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0])
    got = len(body)
    while got < length:
        chunk = s.recv(1 << 20)
        if not chunk:
            raise RuntimeError("closed early")
        got += len(chunk)
    return first - sent, time.perf_counter() - first, length


def summary(values):
    v = sorted(values)
    return statistics.median(v), v[0], v[-1]


stub, stub_port = processes.start_stub()
daemon = None
try:
    upstream = f"http://127.0.0.1:{stub_port}/v1"
    routes = "".join(
        f"  - name: {name}\n    match: {{ prefix: /{name}/ }}\n    upstream: {upstream}\n    network: {network}\n"
        for name, network in [("lag50", "{ latency: 50ms }"), ("lag200", "{ latency: 200ms }"), ("lag1000", "{ latency: 1s }"),
                              ("down2", "{ down: 2MiB }"), ("down8", "{ down: 8MiB }"), ("held", "{ header_control: true }")])
    routes += f"  - name: plain\n    match: {{ prefix: /plain/ }}\n    upstream: {upstream}\n"
    daemon, port, _ = processes.start_daemon(args.binary, "listen: 127.0.0.1:0\nworkers: 1\nlog: { level: error }\n"
                                             "limits: { max_response_body: 16MiB, max_buffered_bytes: 1GiB }\nroutes:\n" + routes)
    def exchanges(kind, count, target):
        """`count` exchanges, each on a fresh connection or all on one kept connection."""
        kept = connect(port) if kind == "kept" else None
        results = []
        for _ in range(count):
            s = kept or connect(port)
            results.append(exchange(s, target))
            if not kept:
                s.close()
        if kept:
            kept.close()
        return results

    print("## Time to first byte against latency (target: within ±10 % + 2 ms)\n")
    print("| latency | connection | median TTFB | range | median error |")
    print("|---|---|---|---|---|")
    parts = args.parts.split(",")
    for name, latency in [("lag50", 0.05), ("lag200", 0.2), ("lag1000", 1.0)] if "ttfb" in parts else []:
        for kind in ["fresh", "kept"]:
            med, lo, hi = summary([ttfb for ttfb, _, _ in exchanges(kind, args.reps, f"/{name}/json")])
            print(f"| {latency * 1000:.0f} ms | {kind} | {med * 1000:.1f} ms | {lo * 1000:.1f}–{hi * 1000:.1f} ms | {(med - latency) * 1000:+.1f} ms ({(med / latency - 1) * 100:+.1f} %) |")
    print("\n## Throughput of a 10 MB reply against down (target: within ±10 %)\n")
    print("| down | connection | median throughput | range | median error |")
    print("|---|---|---|---|---|")
    for name, rate in [("down2", 2 << 20), ("down8", 8 << 20)] if "rate" in parts else []:
        for kind in ["fresh", "kept"]:
            med, lo, hi = summary([length / seconds for _, seconds, length in exchanges(kind, 3, f"/{name}/big?bytes=10000000")])
            print(f"| {rate >> 20} MiB/s | {kind} | {med / (1 << 20):.3f} MiB/s | {lo / (1 << 20):.3f}–{hi / (1 << 20):.3f} | {(med / rate - 1) * 100:+.1f} % |")

    def probe():
        s = connect(port)
        times = []
        for _ in range(args.probes):
            start = time.perf_counter()
            exchange(s, "/plain/json")
            times.append(time.perf_counter() - start)
        s.close()
        times.sort()
        return statistics.median(times), times[int(len(times) * 0.99)]

    def admin_json(target):
        s = connect(port)
        s.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
        s.close()
        return data.partition(b"\r\n\r\n")[2]

    def held_now():
        import json
        return json.loads(admin_json("/-/network"))["shaped_replies"]

    def inflight_now():
        for line in admin_json("/metrics").decode().splitlines():
            if line.startswith("serializerd_inflight_requests "):
                return float(line.split()[1])
        return -1

    if "held" in parts:
        print(f"\n## Unslowed requests beside {args.held} slowed ones, one worker (target: p99 within +1 ms)\n")
        print("| round | held | median | p99 |")
        print("|---|---|---|---|")
    for round in range(5 if "held" in parts else 0):
        base = probe()
        held = []
        for _ in range(args.held):
            s = connect(port)
            s.sendall(b"GET /held/json HTTP/1.1\r\nHost: 127.0.0.1\r\nSerializerd-Fault: latency=60s\r\n\r\n")
            held.append(s)
        # Probed once every slowed reply is back from the upstream and held in the writer.
        deadline = time.time() + 60
        while time.time() < deadline:
            if held_now() >= args.held and inflight_now() == 0:
                break
            time.sleep(0.2)
        loaded = probe()
        for s in held:
            s.close()
        time.sleep(1)
        print(f"| {round + 1} | 0 | {base[0] * 1000:.3f} ms | {base[1] * 1000:.3f} ms |")
        print(f"| {round + 1} | {args.held} | {loaded[0] * 1000:.3f} ms | {loaded[1] * 1000:.3f} ms (p99 {(loaded[1] - base[1]) * 1000:+.3f} ms) |")
finally:
    processes.stop(daemon, stub)
