"""What the Python benchmarks share: the stub upstream they start, and stopping only the
processes they started, by PID."""
import os, signal, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))


def start_stub():
    """The test suite's stub upstream on loopback; returns (process, port)."""
    stub = subprocess.Popen([sys.executable, "-u", os.path.join(HERE, "..", "Tests", "Fixtures", "stub_upstream.py")],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return stub, int(stub.stdout.readline())


def stop(*processes):
    """SIGTERM, then SIGKILL after 10 s, for each process still running."""
    for p in processes:
        if p is not None and p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


def start_daemon(binary, yaml):
    """serializerd on `yaml` (its `listen` may be port 0); returns (process, port, config path)."""
    import tempfile, time
    config = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    config.write(yaml)
    config.close()
    daemon = subprocess.Popen([binary, "serve", "--config", config.name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 20
    while time.time() < deadline:
        out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if f"pid={daemon.pid}," in line:
                return daemon, int(line.split()[3].rsplit(":", 1)[1]), config.name
        time.sleep(0.1)
    stop(daemon)
    raise RuntimeError("the daemon did not listen")
