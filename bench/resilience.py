#!/usr/bin/env python3
"""Resilience toward fragile upstreams (DESIGN §11), against a scripted origin: the test
stub (Tests/Fixtures/stub_upstream.py), which can refuse past its own rate, fail a share of
requests, or be gone. serializerd (BINARY, default .build/release/serializerd) runs with 2
workers; each scenario is timed from here over HTTP/1.1 on loopback.

1. rate: the origin answers 429 with `Retry-After: 1` beyond 10 requests in any second;
   100 requests a second for 10 s go through a route with `limits: { rate: 10/s }`.
   Reports upstream 429s, answers by status, and the slowest answer against queue_timeout.
2. retry: the origin fails 20 % of GETs with 503 at random; 5,000 GETs through a route
   with `retry: { attempts: 4, budget: 25% }`, and through one without. Reports the
   share that succeeded and the upstream requests per client request.
3. breaker: the origin is gone (a closed port); once `breaker: { failures: 5 }` has
   opened, REQUESTS requests (default 2,000) on one kept-alive connection each answered
   `circuit-open`. Reports median, p99 and max.

Loopback only; every process it starts is stopped by PID; each load is bounded in count
and time.

    python3 bench/resilience.py [BINARY] [REQUESTS]       # SCENARIOS="rate retry breaker"
"""
import http.client, json, os, random, socket, statistics, subprocess, sys, tempfile, threading, time

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/serializerd"
requests = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
here = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


stub = subprocess.Popen([sys.executable, os.path.join(here, "..", "Tests", "Fixtures", "stub_upstream.py")],
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
stub_port = int(stub.stdout.readline())
gone_port = free_port()   # nothing listens there
port = free_port()
config = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
config.write(f"""listen: 127.0.0.1:{port}
workers: 2
log: {{ level: error }}
routes:
  - name: rate
    match: {{ prefix: /rate/ }}
    upstream: http://127.0.0.1:{stub_port}/v1
    limits: {{ rate: 10/s, queue: 1000, queue_timeout: 5s }}
  - name: retry
    match: {{ prefix: /retry/ }}
    upstream: http://127.0.0.1:{stub_port}/v1
    retry: {{ attempts: 4, backoff: 10ms, budget: 25% }}
  - name: plain
    match: {{ prefix: /plain/ }}
    upstream: http://127.0.0.1:{stub_port}/v1
  - name: dark
    match: {{ prefix: /dark/ }}
    upstream: http://127.0.0.1:{gone_port}/
    breaker: {{ failures: 5, window: 10s, open: 600s }}
""")
config.close()
daemon = subprocess.Popen([binary, "serve", "--config", config.name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def get(conn, path):
    conn.request("GET", path)
    reply = conn.getresponse()
    body = reply.read()
    return reply.status, body


def stats(key):
    c = http.client.HTTPConnection("127.0.0.1", stub_port, timeout=10)
    try:
        return json.loads(get(c, f"/v1/{key}")[1])
    finally:
        c.close()


try:
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            http.client.HTTPConnection("127.0.0.1", port, timeout=1).request("GET", "/-/routes")
            break
        except OSError:
            time.sleep(0.1)

    scenarios = os.environ.get("SCENARIOS", "rate retry breaker").split()
    if "rate" in scenarios:
        # 1. rate: 100 requests a second for 10 s from 100 threads, one a second each.
        outcomes = []
        lock = threading.Lock()
        start = time.monotonic() + 0.5

        def sender(t):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            for k in range(10):
                due = start + k + t / 100
                time.sleep(max(0, due - time.monotonic()))
                sent = time.monotonic()
                try:
                    status, _ = get(conn, "/rate/limited?limit=10&key=bench")
                except OSError:
                    status = -1
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                with lock:
                    outcomes.append((status, time.monotonic() - sent))

        threads = [threading.Thread(target=sender, args=(t,)) for t in range(100)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=60)
        origin = stats("limitedstats?key=bench")
        by_status = {}
        for status, _ in outcomes:
            by_status[status] = by_status.get(status, 0) + 1
        slowest = max(s for _, s in outcomes)
        refused = sorted(s for status, s in outcomes if status == 503)
        refused_p99 = refused[min(len(refused) - 1, int(len(refused) * 0.99))] * 1000 if refused else 0
        print(f"rate: {len(outcomes)} requests; upstream 429s {origin['refused']}, served {origin['served']} "
              f"(most in any second {origin['busiest']}); answers {dict(sorted(by_status.items()))}; "
              f"slowest answer {slowest:.3f} s (queue_timeout 5 s, plus the upstream's time); "
              f"overloaded answered in p99 {refused_p99:.1f} ms")

    if "retry" in scenarios:
        # 2. retry: 5,000 GETs to an origin failing 20 % at random, with and without retry.
        def run(prefix, key, n=5000):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            ok = 0
            for k in range(n):
                status, _ = get(conn, f"/{prefix}/flaky?chance=0.2&key={key}&n={k}")
                ok += status == 200
            seen = stats(f"flakystats?key={key}")["seen"]
            return ok, seen

        ok, seen = run("retry", "retried")
        plain_ok, plain_seen = run("plain", "plain")
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        retried = sum(float(line.split()[-1]) for line in get(c, "/metrics")[1].decode().splitlines()
                      if line.startswith('serializerd_retries_total{route="retry"'))
        print(f"retry: {ok / 50:.2f} % of 5,000 GETs succeeded, {seen / 5000:.3f} upstream requests each "
              f"(+{(seen - 5000) / 50:.1f} %; {retried:.0f} retries counted); without retry {plain_ok / 50:.1f} %, {plain_seen / 5000:.3f}")

    if "breaker" in scenarios:
        # 3. breaker: open it, then time the refusals on one kept-alive connection.
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for _ in range(5):
            get(conn, "/dark/x")
        times = []
        for _ in range(requests):
            t0 = time.perf_counter()
            status, body = get(conn, "/dark/x")
            times.append((time.perf_counter() - t0) * 1000)
            assert status == 503 and b"circuit-open" in body, (status, body[:200])
        times.sort()
        p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
        print(f"breaker: {requests} circuit-open answers: median {statistics.median(times):.3f} ms, p99 {p99:.3f} ms, max {times[-1]:.3f} ms")
finally:
    daemon.terminate()
    daemon.wait(timeout=10)
    stub.terminate()
    stub.wait(timeout=10)
    os.unlink(config.name)
