#!/usr/bin/env python3
"""How fast a route whose health probe says `unreachable` answers, against one without.

A blackholed upstream on loopback: a socket that listens with a backlog of one and never
accepts, its backlog filled at once, so a further connect hangs until its timeout (SYNs
dropped). serializerd (BINARY, default .build/release/serializerd) has two routes to it:
`probed` with `health: { path: /, interval: 200ms }` and `plain` without; both
`timeout: 2s`. Once /-/routes says `probed` is failing fast, REQUESTS requests (default
200) are timed on it, one at a time, from a fresh connection each, and 3 on `plain`.
Prints median, p99 and max in milliseconds. Loopback only; every process it starts is
stopped by PID.

    python3 bench/fail-fast.py [BINARY] [REQUESTS]
"""
import json, os, socket, statistics, subprocess, sys, tempfile, time, urllib.request

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/serializerd"
count = int(sys.argv[2]) if len(sys.argv) > 2 else 200


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


hole = socket.socket()
hole.bind(("127.0.0.1", 0))
hole.listen(0)
hole_port = hole.getsockname()[1]
fillers = []
for _ in range(4):
    c = socket.socket()
    c.setblocking(False)
    try:
        c.connect(("127.0.0.1", hole_port))
    except BlockingIOError:
        pass
    fillers.append(c)
time.sleep(0.2)

port = free_port()
config = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
config.write(f"listen: 127.0.0.1:{port}\nworkers: 1\nlog: {{ level: error }}\ntimeouts: {{ connect: 2s }}\nroutes:\n"
             f"  - name: probed\n    match: {{ prefix: /probed/ }}\n    upstream: http://127.0.0.1:{hole_port}/\n    timeout: 2s\n"
             f"    health: {{ path: /, interval: 200ms }}\n"
             f"  - name: plain\n    match: {{ prefix: /plain/ }}\n    upstream: http://127.0.0.1:{hole_port}/\n    timeout: 2s\n")
config.close()
daemon = subprocess.Popen([binary, "serve", "--config", config.name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            routes = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/-/routes", timeout=1))["routes"]
            if any(r["name"] == "probed" and r["reachability"]["failing_fast"] for r in routes):
                break
        except OSError:
            pass
        time.sleep(0.1)
    else:
        raise SystemExit("the probe never marked the route unreachable")

    def timed(path):
        start = time.perf_counter()
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10).read()
        except urllib.error.HTTPError as e:
            e.read()
            assert e.code in (502, 504), e.code
        return (time.perf_counter() - start) * 1000

    fast = sorted(timed("/probed/x") for _ in range(count))
    slow = sorted(timed("/plain/x") for _ in range(3))
    p99 = fast[min(len(fast) - 1, int(len(fast) * 0.99))]
    print(f"probed (failing fast), {count} requests: median {statistics.median(fast):.2f} ms, p99 {p99:.2f} ms, max {fast[-1]:.2f} ms")
    print(f"plain (waits for the connect timeout, 2 s), 3 requests: median {statistics.median(slow):.0f} ms")
finally:
    daemon.terminate()
    daemon.wait(timeout=10)
    os.unlink(config.name)
    for c in fillers:
        c.close()
    hole.close()
