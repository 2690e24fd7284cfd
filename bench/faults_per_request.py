"""Minor page faults per proxied request (issue 13's body path): the daemon (release build,
one worker) in front of the test stub serving each payload file; 20 warm-up requests, then
200 on one keep-alive connection, the daemon's minflt read from /proc/PID/stat around them.
Loopback only; both processes are stopped by PID at the end.
    python3 bench/faults_per_request.py FILE...      (make release first)"""
import http.client, subprocess, sys, os, re
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
stub = subprocess.Popen(["python3", "-u", os.path.join(root, "Tests/Fixtures/stub_upstream.py")], stdout=subprocess.PIPE, text=True)
sport = int(stub.stdout.readline().strip())
import tempfile
cfg = os.path.join(tempfile.mkdtemp(), "cfg.yaml")
open(cfg, "w").write(f"listen: 127.0.0.1:0\nworkers: 1\nlog: {{ level: notice, format: json }}\nroutes:\n  - name: api\n    match: {{ prefix: / }}\n    upstream: http://127.0.0.1:{sport}/\n")
d = subprocess.Popen([os.path.join(root, ".build/release/serializerd"), "serve", "--config", cfg], stdout=subprocess.PIPE, text=True)
line = d.stdout.readline()
port = int(re.search(r'127\.0\.0\.1:(\d+)', line).group(1))
def faults():
    f = open(f"/proc/{d.pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[7])  # minflt
try:
    for path in sys.argv[1:]:
        conn = http.client.HTTPConnection("127.0.0.1", port)
        target = f"/file?path={path}&type=application/json"
        size = os.path.getsize(path)
        for _ in range(20):
            conn.request("GET", target); r = conn.getresponse(); body = r.read(); assert r.status == 200, r.status
        n = 200
        before = faults()
        for _ in range(n):
            conn.request("GET", target); r = conn.getresponse(); body = r.read()
        after = faults()
        print(f"{os.path.basename(path)}: {size} B in, {len(body)} B out, {(after - before) / n:.1f} minor page faults per request")
finally:
    d.terminate(); stub.terminate(); d.wait(); stub.wait()
