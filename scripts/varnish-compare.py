#!/usr/bin/env python3
"""serializerd's cache decisions beside Varnish's, on the same upstream script.

Starts the test stub (Tests/Fixtures/stub_upstream.py, whose /v1/cached/KEY counts its
requests), varnishd (Debian's, builtin VCL, default_grace=0 so a stale object is never
served while it is refetched, default_keep=3600 so it revalidates with the upstream's
validators) and serializerd (one route, `cache: {}`: RFC 9111 for a shared cache), each on
127.0.0.1. Every scenario sends the same requests to both, each under its own key, and
records per request what the upstream saw: `fetch` (a new request), `reval` (a
conditional one) or `cache` (nothing: answered from the cache). Prints one line per
scenario and whether the two agree; exits 0 whatever they say (this is a comparison, not a
test: the differences are listed in BENCHMARKS.md with the rule each side follows).

    python3 scripts/varnish-compare.py [SERIALIZERD_BINARY]     (default .build/debug/serializerd)

Every process it starts is stopped by PID; nothing but loopback is contacted.
"""
import json, os, shutil, socket, subprocess, sys, tempfile, time, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BINARY = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/debug/serializerd")
HOUR_AGO = time.strftime("%a,%%20%d%%20%b%%20%Y%%20%H:%M:%S%%20GMT", time.gmtime(time.time() - 3600))

# name, query, steps: each step (seconds to wait first, request headers).
SCENARIOS = [
    ("fresh max-age", "cc=max-age=60", [(0, {}), (0, {})]),
    ("stale, ETag", "cc=max-age=1", [(0, {}), (1.5, {}), (0, {})]),
    ("stale, Last-Modified only", f"cc=max-age=1&noetag&lm={HOUR_AGO}", [(0, {}), (1.5, {})]),
    ("s-maxage over max-age=0", "cc=max-age=0,s-maxage=60", [(0, {}), (0, {})]),
    ("Expires, no Cache-Control", "cc=&exp=60", [(0, {}), (0, {})]),
    ("heuristic: Last-Modified an hour ago", f"cc=&noetag&lm={HOUR_AGO}", [(0, {}), (0, {})]),
    ("no-store", "cc=no-store", [(0, {}), (0, {})]),
    ("private", "cc=private,max-age=60", [(0, {}), (0, {})]),
    ("Set-Cookie", "cookie", [(0, {}), (0, {})]),
    ("Vary: X-User", "vary=X-User", [(0, {"X-User": "a"}), (0, {"X-User": "b"}), (0, {"X-User": "a"})]),
    ("Vary: *", "vary=*", [(0, {}), (0, {})]),
    ("Authorization, max-age", "cc=max-age=60", [(0, {"Authorization": "Bearer a"}), (0, {"Authorization": "Bearer a"})]),
    ("Authorization, public", "cc=public,max-age=60", [(0, {"Authorization": "Bearer a"}), (0, {"Authorization": "Bearer a"})]),
    ("response no-cache", "cc=no-cache", [(0, {}), (0, {})]),
    ("client no-cache", "cc=max-age=60", [(0, {}), (0, {"Cache-Control": "no-cache"})]),
    ("client max-age=0", "cc=max-age=60", [(0, {}), (0, {"Cache-Control": "max-age=0"})]),
    ("invalid max-age", "cc=max-age=-5", [(0, {}), (0, {})]),
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, headers=None):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status
    except urllib.error.HTTPError as error:
        return error.code


def wait_for(url, deadline=20):
    end = time.time() + deadline
    while time.time() < end:
        try:
            get(url)
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"not answering: {url}")


def main():
    scratch = tempfile.mkdtemp(prefix="varnish-compare-")
    processes = []
    try:
        stub = subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests/Fixtures/stub_upstream.py")], stdout=subprocess.PIPE, text=True)
        processes.append(stub)
        stub_port = int(stub.stdout.readline())
        varnish_port, serializerd_port = free_port(), free_port()
        processes.append(subprocess.Popen(
            ["varnishd", "-F", "-n", os.path.join(scratch, "varnish"), "-a", f"127.0.0.1:{varnish_port}",
             "-b", f"127.0.0.1:{stub_port}", "-s", "malloc,32m", "-p", "default_grace=0", "-p", "default_keep=3600"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        config = os.path.join(scratch, "serializerd.yaml")
        with open(config, "w") as f:
            f.write(f"listen: 127.0.0.1:{serializerd_port}\nworkers: 1\nlog: {{ level: error }}\nroutes:\n"
                    f"  - name: api\n    match: {{ prefix: / }}\n    upstream: http://127.0.0.1:{stub_port}/\n    cache: {{}}\n")
        processes.append(subprocess.Popen([BINARY, "serve", "--config", config], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for port in (varnish_port, serializerd_port):
            wait_for(f"http://127.0.0.1:{port}/v1/json")

        def state(key):
            with urllib.request.urlopen(f"http://127.0.0.1:{stub_port}/v1/cachestate/{key}", timeout=10) as reply:
                return json.load(reply)

        agree = 0
        print(f"{'scenario':40} {'serializerd':28} {'varnish':28} same")
        for index, (name, query, steps) in enumerate(SCENARIOS):
            seen = {}
            for side, port in (("serializerd", serializerd_port), ("varnish", varnish_port)):
                key = f"{side[0]}{index}"
                decisions = []
                for wait, headers in steps:
                    before = state(key)
                    time.sleep(wait)
                    get(f"http://127.0.0.1:{port}/v1/cached/{key}?{query}", headers)
                    after = state(key)
                    if after["requests"] == before["requests"]:
                        decisions.append("cache")
                    elif len(after["conditionals"]) > len(before["conditionals"]):
                        decisions.append("reval")
                    else:
                        decisions.append("fetch")
                seen[side] = " ".join(decisions)
            same = seen["serializerd"] == seen["varnish"]
            agree += same
            print(f"{name:40} {seen['serializerd']:28} {seen['varnish']:28} {'yes' if same else 'NO'}")
        print(f"{agree} of {len(SCENARIOS)} scenarios decided alike")
    finally:
        for process in reversed(processes):
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
