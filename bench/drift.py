#!/usr/bin/env python3
"""Shape drift through the daemon at scale: false reports, then planted changes.

serializerd (BINARY, default .build/release/serializerd) fronts the test stub upstream
(Tests/Fixtures/stub_upstream.py, whose /json answers the `body` query parameter) on a
route with `contract: { drift: true }` (drift_after 20, 2 workers). ANSWERS answers
(default 10,000) over 50 endpoints whose values vary — numbers with and without a
fraction, strings of any text, lists of any length, maps keyed by ids, ids in the path —
and whose shape does not; then, per endpoint of the first four, five planted breaking
changes by chaos (drop, null, string, singleton, html_200). Prints the reports counted
by `/-/drift` after each phase: 0 and 20 are the targets. Loopback only; every process it
starts is stopped by PID.

    python3 bench/drift.py [BINARY] [ANSWERS]
"""
import json, os, random, subprocess, sys, tempfile, threading, time, urllib.parse, urllib.request

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/serializerd"
answers = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
here = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(46)


def answer(n):
    items = [{"sku": "s%d-%d" % (k, rng.randrange(1000)), "qty": rng.randrange(9),
              "price": rng.choice([3, 3.25, 10, 0.5])} for k in range(rng.randrange(4))]
    by_id = {str(rng.randrange(100_000)): {"seen": rng.random() < 0.5} for _ in range(rng.randrange(3))}
    return {"id": n, "uuid": "123e4567-e89b-12d3-a456-%012x" % rng.randrange(16 ** 12),
            "name": "".join(rng.choice("abcdefgh é\"\\/") for _ in range(rng.randrange(1, 12))),
            "when": "2026-11-%02dT%02d:00:00Z" % (rng.randrange(1, 29), rng.randrange(24)),
            "user": {"id": rng.randrange(10 ** 6), "email": "u%d@example.com" % n, "tags": ["t"] * (1 + rng.randrange(3))},
            "n": rng.randrange(7), "items": items, "by_id": by_id, "ok": rng.random() < 0.5}


def get(port, path, headers=None):
    request = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def changes(port):
    routes = json.loads(get(port, "/-/drift")[1])["routes"]
    return routes[0]["changes"], routes[0]


stub = subprocess.Popen([sys.executable, "-u", os.path.join(here, "..", "Tests", "Fixtures", "stub_upstream.py")],
                        stdout=subprocess.PIPE, text=True)
daemon = None
try:
    stub_port = int(stub.stdout.readline())
    work = tempfile.mkdtemp()
    config = os.path.join(work, "serializerd.yaml")
    with open(config, "w") as f:
        f.write("listen: 127.0.0.1:0\nworkers: 2\nroutes:\n  - name: drift\n    match: { prefix: /drift/ }\n"
                "    upstream: http://127.0.0.1:%d/v1\n    contract: { drift: true }\n    network: { header_control: true }\n" % stub_port)
    daemon = subprocess.Popen([binary, "serve", "--config", config], stdout=subprocess.PIPE, text=True)
    port = None
    deadline = time.time() + 20
    while port is None and time.time() < deadline:
        line = daemon.stdout.readline()
        if '"msg":"ready"' in line:
            port = int(line.split('"listen":"127.0.0.1:')[1].split('"')[0])
    assert port, "serializerd did not become ready"
    # Its log is read away so that the daemon never blocks on a full pipe.
    threading.Thread(target=lambda: [None for _ in daemon.stdout], daemon=True).start()
    started = time.time()
    for n in range(answers):
        body = urllib.parse.quote(json.dumps(answer(n)))
        status, _ = get(port, "/drift/e%d/%d/json?body=%s" % (n % 50, rng.randrange(10 ** 9), body))
        assert status == 200, status
    stable, summary = changes(port)
    print("stable shape: %d answers over %d endpoints in %.1f s, %d reports" % (summary["answers"], summary["endpoints"], time.time() - started, len(stable)))
    for change in stable[:5]:
        print("  unexpected:", change)
    planted = ["drop=/user/email", "null=/n", "string=/user/id", "singleton=/user/tags", "html_200"]
    for e in range(4):
        for chaos in planted:
            body = urllib.parse.quote(json.dumps(answer(0)))
            get(port, "/drift/e%d/%d/json?body=%s" % (e, rng.randrange(10 ** 9), body), {"Serializerd-Chaos": chaos})
    after, summary = changes(port)
    found = {(c["endpoint"], c["kind"], c["pointer"]) for c in after[len(stable):]}
    print("planted: 20 changes, %d reported, %d distinct; counts %s" % (len(after) - len(stable), len(found), summary["counts"]))
finally:
    for process in (daemon, stub):
        if process and process.poll() is None:
            process.terminate()
            process.wait(timeout=15)
