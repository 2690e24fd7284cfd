#!/usr/bin/env python3
"""What reading a tape costs in memory (DESIGN §2: at most twice the file plus 64 MiB).

Writes a HAR of SIZE MiB shaped like a browser's (a dozen headers an entry, JSON bodies of
a few KB, some base64 images), then measures the peak RSS of
  - `serializerd tape import` of it into a route's tape,
  - `serializerd tape verify` reading that tape,
  - `serializerd serve` loading it at start (VmHWM once ready),
and prints each as MiB and as a multiple of the file.

  bench/har_memory.py [--binary .build/release/serializerd] [--size 256]
"""
import argparse, base64, json, os, random, shutil, subprocess, sys, tempfile, time


def write_har(path, size_mib, seed=7):
    rng = random.Random(seed)
    target = (size_mib << 20) - (1 << 17)  # the last entry and the closing brackets fit under it
    png = base64.b64encode(bytes(rng.getrandbits(8) for _ in range(6000))).decode()
    with open(path, "w") as f:
        f.write('{"log":{"version":"1.2","creator":{"name":"WebInspector","version":"537.36"},"pages":[],"entries":[')
        written, n = 0, 0
        while written < target:
            headers = [{"name": name, "value": value} for name, value in [
                (":authority", "api.example.test"), ("accept", "application/json"), ("accept-language", "en-US,en;q=0.9"),
                ("user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"),
                ("sec-ch-ua", '"Chromium";v="120"'), ("x-request-id", "req-%08d" % n), ("referer", "https://app.example.test/page/%d" % n)]]
            if n % 10 == 9:
                content = {"size": 6000, "mimeType": "image/png", "text": png, "encoding": "base64"}
            else:
                items = [{"id": n * 100 + k, "name": "item %d" % k, "price": round(rng.random() * 100, 2), "tags": ["a", "b"]}
                         for k in range(rng.randint(5, 40))]
                content = {"size": 0, "mimeType": "application/json", "text": json.dumps({"page": n, "items": items})}
            entry = {"startedDateTime": "2026-01-01T10:00:00.000Z", "time": 12.5,
                     "request": {"method": "GET", "url": "https://api.example.test/v1/items?page=%d" % n, "httpVersion": "http/2.0",
                                 "headers": headers, "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
                     "response": {"status": 200, "statusText": "", "httpVersion": "http/2.0",
                                  "headers": [{"name": "content-type", "value": content["mimeType"]},
                                              {"name": "cache-control", "value": "max-age=60"}, {"name": "date", "value": "Thu, 01 Jan 2026 10:00:00 GMT"}],
                                  "cookies": [], "content": content, "redirectURL": "", "headersSize": -1, "bodySize": -1},
                     "cache": {}, "timings": {"send": 0, "wait": 12, "receive": 0.5}}
            text = (',' if n else '') + json.dumps(entry)
            f.write(text)
            written += len(text)
            n += 1
        f.write(']}}')
    return n


def peak_of(argv):
    """Peak RSS (MiB) of one command run to its end (wait4: that child's own maximum)."""
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        sys.exit("%s failed: %s" % (" ".join(argv), child.stderr.read().decode().strip()))
    return usage.ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=".build/release/serializerd")
    parser.add_argument("--size", type=int, default=256, help="HAR size in MiB")
    parser.add_argument("--only", choices=["import", "verify", "serve"])
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    work = tempfile.mkdtemp(prefix="har-memory-")
    try:
        har = os.path.join(work, "big.har")
        entries = write_har(har, args.size)
        size = os.path.getsize(har) / (1 << 20)
        config = os.path.join(work, "serializerd.yaml")
        with open(config, "w") as f:
            f.write("listen: 127.0.0.1:0\nworkers: 1\ntapes: { dir: %s/tapes }\nroutes:\n  - name: app\n    match: { prefix: /app/ }\n"
                    "    upstream: http://127.0.0.1:9/v1/\n    tape: { mode: replay }\n    response: { serializer: raw }\n" % work)
        rows = []
        if args.only in (None, "import"):
            rows.append(("tape import", peak_of([binary, "tape", "import", har, "--route", "app", "--config", config])))
        else:
            os.makedirs(os.path.join(work, "tapes"), exist_ok=True)
            shutil.copy(har, os.path.join(work, "tapes", "app.har"))
        if args.only in (None, "verify"):
            rows.append(("tape verify", peak_of([binary, "tape", "verify", "--config", config])))
        if args.only in (None, "serve"):
            daemon = subprocess.Popen([binary, "serve", "--config", config], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            try:
                deadline = time.time() + 600
                while time.time() < deadline:
                    line = daemon.stdout.readline()
                    if not line or '"msg":"ready"' in line or " ready " in line:
                        break
                with open("/proc/%d/status" % daemon.pid) as status:
                    hwm = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
                rows.append(("serve (loaded)", hwm / 1024))
            finally:
                daemon.terminate()
                daemon.wait(timeout=30)
        print("HAR: %.1f MiB, %d entries; bound: 2 x file + 64 MiB = %.0f MiB" % (size, entries, 2 * size + 64))
        for name, peak in rows:
            print("%-16s peak %7.1f MiB  (%.2f x the file)  %s" % (name, peak, peak / size, "within" if peak <= 2 * size + 64 else "OVER"))
        if any(peak > 2 * size + 64 for _, peak in rows):
            sys.exit(1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
