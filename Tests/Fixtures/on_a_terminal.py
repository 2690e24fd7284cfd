"""Runs a command with a pseudo-terminal as its stdout and stderr, copying what it writes
to this process's stdout: how the daemon behaves when a person runs it in a terminal.
SIGTERM is passed on to the command."""
import ctypes, os, pty, signal, sys

# A test runner may start us with SIGTERM blocked; the mask survives exec.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
pid, fd = pty.fork()
if pid == 0:
    # If the relay is killed outright, the command is stopped too rather than orphaned
    # (losing its terminal would only send SIGHUP: a reload for the daemon).
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG
    os.execv(sys.argv[1], sys.argv[1:])
signal.signal(signal.SIGTERM, lambda *_: os.kill(pid, signal.SIGTERM))
while True:
    try:
        data = os.read(fd, 65536)
    except InterruptedError:
        continue
    except OSError:
        break
    if not data:
        break
    sys.stdout.buffer.write(data)
    sys.stdout.flush()
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
