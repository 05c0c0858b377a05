#!/usr/bin/env python3
"""A small HTTPS server on loopback for the TLS tests (docs/testing.md, "TLS").

    https_server.py serve --cert CERT.pem --key KEY.pem [--max-tls 1.1] [--relay HOST:PORT]
    https_server.py probe --port PORT --tls 1.1

serve: listens on 127.0.0.1 (a free port), prints "listening PORT" on standard output once ready, and
answers every TLS connection: with --relay it forwards the decrypted bytes to a plain TCP server (a TLS
front for the App Store simulator), otherwise it answers each HTTP request with 200 and a short body
naming the TLS version. --max-tls 1.1 offers TLS 1.0 and 1.1 only (OpenSSL 3 needs security level 0 for
them). Handshake failures are logged on standard error. It exits when its standard input closes (the
test process went away) or on SIGTERM.

probe: connects to 127.0.0.1:PORT at exactly the given TLS version without verifying the certificate
and prints the negotiated version ("TLSv1.1"): proof that the server really offers it.
"""
import argparse
import os
import signal
import socket
import ssl
import sys
import threading

VERSIONS = {
    "1.0": ssl.TLSVersion.TLSv1,
    "1.1": ssl.TLSVersion.TLSv1_1,
    "1.2": ssl.TLSVersion.TLSv1_2,
    "1.3": ssl.TLSVersion.TLSv1_3,
}


def log(message):
    sys.stderr.write("https_server: %s\n" % message)
    sys.stderr.flush()


def pump(source, target):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (source, target):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def relay(conn, upstream):
    host, port = upstream.rsplit(":", 1)
    try:
        back = socket.create_connection((host, int(port)), timeout=10)
        back.settimeout(None)
    except OSError as error:
        log("relay: cannot reach %s: %s" % (upstream, error))
        conn.close()
        return
    other = threading.Thread(target=pump, args=(back, conn), daemon=True)
    other.start()
    pump(conn, back)
    other.join()
    back.close()
    conn.close()


def answer(conn):
    data = b""
    try:
        while True:
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, data = data.split(b"\r\n\r\n", 1)
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            while len(data) < length:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            data = data[length:]
            body = ("hello over %s\n" % conn.version()).encode()
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n" % len(body) + body
            )
    except OSError:
        pass
    finally:
        conn.close()


def serve(args):
    # A parent's Dispatch thread may have spawned us with SIGTERM blocked.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(args.cert, args.key)
    if args.max_tls:
        context.minimum_version = ssl.TLSVersion.TLSv1
        context.maximum_version = VERSIONS[args.max_tls]
        context.set_ciphers("DEFAULT:@SECLEVEL=0")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)

    def watch_stdin():
        try:
            while sys.stdin.buffer.read(1):
                pass
        except OSError:
            pass
        os._exit(0)

    threading.Thread(target=watch_stdin, daemon=True).start()
    print("listening %d" % listener.getsockname()[1], flush=True)

    def handle(raw):
        try:
            conn = context.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError) as error:
            log("handshake refused: %s" % error)
            raw.close()
            return
        if args.relay:
            relay(conn, args.relay)
        else:
            answer(conn)

    while True:
        raw, _ = listener.accept()
        threading.Thread(target=handle, args=(raw,), daemon=True).start()


def probe(args):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.minimum_version = VERSIONS[args.tls]
    context.maximum_version = VERSIONS[args.tls]
    context.set_ciphers("DEFAULT:@SECLEVEL=0")
    with socket.create_connection(("127.0.0.1", args.port), timeout=10) as raw:
        with context.wrap_socket(raw) as conn:
            print(conn.version(), flush=True)


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    serving = commands.add_parser("serve")
    serving.add_argument("--cert", required=True)
    serving.add_argument("--key", required=True)
    serving.add_argument("--max-tls", choices=sorted(VERSIONS))
    serving.add_argument("--relay")
    probing = commands.add_parser("probe")
    probing.add_argument("--port", type=int, required=True)
    probing.add_argument("--tls", choices=sorted(VERSIONS), required=True)
    args = parser.parse_args()
    if args.command == "serve":
        serve(args)
    else:
        probe(args)


if __name__ == "__main__":
    main()
