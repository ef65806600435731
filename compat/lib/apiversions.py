"""apiversions.py HOST:PORT: prints the API keys the broker advertises, one
"key min max" line each, from an ApiVersions v0 request (which every broker
answers). compat/suite.sh uses it to tell a scenario the broker cannot serve
(its APIs are not advertised: "broker-missing") from one that fails.
Standard library only. Exit status 0, or 1 with the reason on stderr."""
import socket
import struct
import sys


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    client = b"strand-compat-suite"
    # Request header v1: api_key 18, version 0, correlation id, client id.
    body = struct.pack(">hhih", 18, 0, 1, len(client)) + client
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(struct.pack(">i", len(body)) + body)
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
            chunk = sock.recv(65536)
            if not chunk:
                sys.exit("apiversions: connection closed")
            data += chunk
    corr, err, n = struct.unpack(">ihi", data[4:14])
    if corr != 1 or err != 0:
        sys.exit("apiversions: correlation %d, error %d" % (corr, err))
    for i in range(n):
        key, lo, hi = struct.unpack(">hhh", data[14 + 6 * i:20 + 6 * i])
        print(key, lo, hi)


if __name__ == "__main__":
    main()
