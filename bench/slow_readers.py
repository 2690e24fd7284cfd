#!/usr/bin/env python3
"""Slow readers against the buffer budget (issue 10): N clients ask for large replies and
never read them. Reports the daemon's RSS at idle and while they hang on, and how many were
answered 503 overloaded. Loopback only; every process started here is stopped by PID.

    bench/slow_readers.py [--binary .build/release/serializerd] [--clients 24] [--mib 20] [--budget 64MiB]
"""
import argparse, os, signal, socket, subprocess, sys, tempfile, time
import processes

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("--binary", default=os.path.join(here, "..", ".build", "release", "serializerd"))
ap.add_argument("--clients", type=int, default=24)
ap.add_argument("--mib", type=int, default=20)
ap.add_argument("--budget", default="64MiB")
ap.add_argument("--hold", type=float, default=5.0)
args = ap.parse_args()

def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return -1

stub, stub_port = processes.start_stub()
daemon = None
try:
    config = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    config.write(f"listen: 127.0.0.1:0\nworkers: 2\nlog: {{ level: error }}\n"
                 f"limits: {{ max_buffered_bytes: {args.budget}, max_response_body: 64MiB }}\n"
                 f"routes:\n  - name: api\n    match: {{ prefix: /api/ }}\n    upstream: http://127.0.0.1:{stub_port}/v1\n")
    config.close()
    daemon = subprocess.Popen([args.binary, "serve", "--config", config.name, "--listen", "127.0.0.1:0"],
                              stdout=subprocess.PIPE, text=True)
    port = None
    os.set_blocking(daemon.stdout.fileno(), True)
    # log level error: the ready line is a notice, so find the port from /proc instead.
    deadline = time.time() + 20
    while port is None and time.time() < deadline:
        out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if f"pid={daemon.pid}," in line:
                port = int(line.split()[3].rsplit(":", 1)[1])
        time.sleep(0.1)
    assert port, "daemon did not listen"
    time.sleep(0.5)
    idle = rss_mib(daemon.pid)
    clients = []
    for k in range(args.clients):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", port))
        s.sendall(f"GET /api/big?bytes={args.mib << 20} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        clients.append(s)
    peak = idle
    end = time.time() + args.hold
    while time.time() < end:
        peak = max(peak, rss_mib(daemon.pid))
        time.sleep(0.05)
    overloaded = served = 0
    for s in clients:
        s.setblocking(False)
        try:
            head = s.recv(16, socket.MSG_PEEK)
        except BlockingIOError:
            head = b""
        if head.startswith(b"HTTP/1.1 503"):
            overloaded += 1
        elif head.startswith(b"HTTP/1.1 200"):
            served += 1
    print(f"clients {args.clients} x {args.mib} MiB, max_buffered_bytes {args.budget}: idle RSS {idle:.1f} MiB, "
          f"peak RSS {peak:.1f} MiB, 200 (being sent) {served}, 503 overloaded {overloaded}")
    for s in clients:
        s.close()
finally:
    processes.stop(daemon, stub)
