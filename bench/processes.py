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
