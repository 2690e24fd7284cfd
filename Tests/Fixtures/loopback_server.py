"""The accept loop the raw-socket test upstreams share: loopback only, its port printed
on the first line of stdout, a thread per connection, TLS with `--tls CERT KEY`."""
import signal, socket, sys


def serve(start, backlog=1024):
    """Accepts forever; `start(sock)` takes each connection (on its own thread)."""
    # The test runner's blocked signals are inherited; SIGTERM must stop the stub.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(backlog)
    context = None
    if "--tls" in sys.argv:
        import ssl
        at = sys.argv.index("--tls")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[at + 1], sys.argv[at + 2])
    print(server.getsockname()[1], flush=True)
    while True:
        sock, _ = server.accept()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if context:
            try:
                sock = context.wrap_socket(sock, server_side=True)
            except OSError:
                sock.close()
                continue
        start(sock)
