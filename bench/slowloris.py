#!/usr/bin/env python3
"""Slowloris against serializerd (issue 10): ATTACKERS connections trickle one header byte a
second and reconnect whenever the daemon closes them, under `ulimit -n NOFILE` and
`client_idle: IDLE`. A normal client asks every 0.25 s; reports its worst and median answer
time after the first deadline, the daemon's CPU share, and its log lines per second.
Loopback only; every process started here is stopped by PID.

    bench/slowloris.py [--binary .build/release/serializerd] [--attackers 300] [--nofile 200] [--idle 5] [--seconds 20]
"""
import argparse, os, select, signal, socket, statistics, subprocess, sys, tempfile, time
import processes

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("--binary", default=os.path.join(here, "..", ".build", "release", "serializerd"))
ap.add_argument("--attackers", type=int, default=300)
ap.add_argument("--nofile", type=int, default=200)
ap.add_argument("--idle", type=int, default=5)
ap.add_argument("--seconds", type=float, default=20)
args = ap.parse_args()

def cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

stub, stub_port = processes.start_stub()
daemon = None
attackers = []
try:
    config = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    config.write(f"listen: 127.0.0.1:0\nworkers: 2\ntimeouts: {{ client_idle: {args.idle}s }}\n"
                 f"routes:\n  - name: api\n    match: {{ prefix: /api/ }}\n    upstream: http://127.0.0.1:{stub_port}/v1\n")
    config.close()
    log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)
    daemon = subprocess.Popen(["/bin/sh", "-c", f'ulimit -n {args.nofile} && exec "$0" serve --config "$1"', args.binary, config.name],
                              stdout=log, stderr=subprocess.STDOUT)
    port = None
    deadline = time.time() + 20
    while port is None and time.time() < deadline:
        for line in open(log.name):
            if '"msg":"ready"' in line:
                port = int(line.split('"listen":"')[1].split('"')[0].rsplit(":", 1)[1])
        time.sleep(0.1)
    assert port, "daemon did not start"

    def attack():
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        return [s, 0]
    attackers = [attack() for _ in range(args.attackers)]
    started = time.time()
    cpu0 = cpu(daemon.pid)
    next_trickle = started
    samples = []
    while time.time() - started < args.seconds:
        now = time.time()
        if now >= next_trickle:
            next_trickle += 1
            for a in attackers:
                try:
                    a[0].send(b"GET /api/json HTTP/1.1\r\nHost: x\r\nX-A: "[a[1]:a[1] + 1] if a[1] < 33 else b"a")
                    a[1] += 1
                except OSError:
                    a[0].close()
                    a[:] = attack()
            # Reap the ones the daemon closed, and reconnect them.
            for a in attackers:
                r, _, _ = select.select([a[0]], [], [], 0)
                if r:
                    try:
                        closed = a[0].recv(1) == b""
                    except OSError:
                        closed = True
                    if closed:
                        a[0].close()
                        a[:] = attack()
        asked = time.time()
        try:
            c = socket.create_connection(("127.0.0.1", port), timeout=10)
            c.sendall(b"GET /api/json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            ok = c.recv(64).startswith(b"HTTP/1.1 200")
            c.close()
        except OSError:
            ok = False
        samples.append((asked - started, time.time() - asked, ok))
        time.sleep(0.25)
    elapsed = time.time() - started
    used = cpu(daemon.pid) - cpu0
    after = [(t, d, ok) for t, d, ok in samples if t > args.idle + 1]
    lines = sum(1 for line in open(log.name) if '"msg":"accept_paused"' in line or '"msg":"libevent"' in line)
    print(f"{args.attackers} attackers, ulimit -n {args.nofile}, client_idle {args.idle}s, {elapsed:.0f} s: "
          f"normal client after the first deadline: {sum(ok for _, _, ok in after)}/{len(after)} answered 200, "
          f"median {statistics.median(d for _, d, _ in after) * 1000:.1f} ms, worst {max(d for _, d, _ in after) * 1000:.1f} ms; "
          f"daemon CPU {100 * used / elapsed:.1f} %; warning lines {lines} ({lines / elapsed:.2f}/s)")
finally:
    for a in attackers:
        a[0].close()
    processes.stop(daemon, stub)
