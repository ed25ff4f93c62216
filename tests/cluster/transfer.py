#!/usr/bin/env python3
"""A timed TCP transfer between emulated hosts (no iperf needed).

transfer.py serve ADDR PORT        accept one connection, read to EOF, print "BYTES SECONDS"
                                   (seconds from the first byte to the last)
transfer.py send ADDR PORT BYTES   connect (retrying for 5 s) and send BYTES bytes
transfer.py probe ADDR PORT        print "reachable" if the host answers within 2 s (a connection
                                   opens or is refused), else "unreachable"
"""
import socket
import sys
import time


def serve(addr, port):
    with socket.create_server((addr, port), reuse_port=False) as server:
        server.settimeout(60)
        conn, _ = server.accept()
        with conn:
            conn.settimeout(60)
            total, first = 0, None
            while True:
                chunk = conn.recv(1 << 20)
                if not chunk:
                    break
                if first is None:
                    first = time.monotonic()
                total += len(chunk)
            last = time.monotonic()
    print(total, f"{last - (first or last):.6f}", flush=True)


def connect(addr, port, patience):
    deadline = time.monotonic() + patience
    while True:
        try:
            return socket.create_connection((addr, port), timeout=2)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def send(addr, port, size):
    block = b"x" * (1 << 20)
    with connect(addr, port, 5) as conn:
        conn.settimeout(120)
        left = size
        while left > 0:
            n = min(left, len(block))
            conn.sendall(block[:n])
            left -= n


def main():
    mode, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode == "serve":
        serve(addr, port)
    elif mode == "send":
        send(addr, port, int(sys.argv[4]))
    elif mode == "probe":
        try:
            socket.create_connection((addr, port), timeout=2).close()
            print("reachable")
        except ConnectionRefusedError:
            print("reachable")
        except OSError:
            print("unreachable")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
