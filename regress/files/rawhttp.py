#!/usr/bin/env python3
# Copyright (c) 2026 The depotd authors
#
# Permission to use, copy, modify, and distribute this software for any
# purpose with or without fee is hereby granted, provided that the above
# copyright notice and this permission notice appear in all copies.
#
# THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
# WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
# MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
# ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
# WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
# ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
# OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.

# regress/files/rawhttp.py: what curl will not send for the Files suite.
#
#	rawhttp.py body OUT CASE	write a multipart body for CASE to OUT
#					(boundary BOUNDARY below)
#	rawhttp.py half PORT TOKEN SIZE	start an upload declaring SIZE bytes
#					of file, send half, then close
#	rawhttp.py halfchunk PORT TOKEN SIZE	the same, chunked
#	rawhttp.py drip PORT TOKEN SECONDS	upload drip.bin at one byte
#					a second; print the status code
import socket
import sys
import time

BOUNDARY = "XyZzyBoundary42"


def part(name, value, filename=None, ctype=None):
    head = 'Content-Disposition: form-data; name="%s"' % name
    if filename is not None:
        head += '; filename="%s"' % filename
    head = head.encode("utf-8") + b"\r\n"
    if ctype is not None:
        head += b"Content-Type: " + ctype.encode() + b"\r\n"
    return b"--" + BOUNDARY.encode() + b"\r\n" + head + b"\r\n" + value + \
        b"\r\n"


def end():
    return b"--" + BOUNDARY.encode() + b"--\r\n"


def body(case):
    data = b"some bytes\n"
    if case == "escaped-name":
        # %22 is a quote, %0D%0A a CR LF to be dropped after decoding.
        return part("file", data, "dir/sub/a%22q%0D%0Ab \u00e9t\u00e9.txt",
                    "text/plain") + end()
    if case == "backslash-name":
        return part("file", data, "x%5Cy.txt", "text/plain") + end()
    if case == "control-name":
        return part("file", data, "c\x01t\x7fl.txt", "text/plain") + end()
    if case == "no-type-txt":
        return part("file", data, "plain.txt") + end()
    if case == "empty-name":
        return part("file", data, "", "text/plain") + end()
    if case == "long-name":
        # Over the suite's max-filename of 1000 bytes.
        return part("file", data, "n" * 1100 + ".txt", "text/plain") + end()
    if case == "long-utf8-html":
        # 999 bytes; the last segment alone percent-encodes to 2975.
        return part("file", b"<script>alert(1)</script>\n",
                    "dir/" + "\u20ac" * 330 + ".html", "text/html") + end()
    if case == "two-files":
        return part("file", data, "a.txt") + part("file", data, "b.txt") + \
            end()
    if case == "no-file":
        return part("purpose", b"user_data") + end()
    if case == "empty-file":
        return part("file", b"", "e.txt", "text/plain") + end()
    if case == "unterminated":
        return b"--" + BOUNDARY.encode() + \
            b'\r\nContent-Disposition: form-data; name="file"; ' \
            b'filename="u.txt"\r\n\r\nabc'
    if case == "garbage":
        return b"this is not a multipart body at all\r\n"
    if case == "no-headers-end":
        return b"--" + BOUNDARY.encode() + \
            b"\r\nContent-Disposition: form-data; name=\"file\"" + \
            b"\r\n--" + BOUNDARY.encode() + b"--\r\n"
    raise SystemExit("unknown case " + case)


def half(port, token, size, chunked):
    head = part("file", b"", "half.bin", "application/octet-stream")
    head = head[:-2]	# the part's value follows
    total = len(head) + size + 2 + len(end())
    s = socket.create_connection(("127.0.0.1", port))
    req = "POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\n" \
        "Authorization: Bearer %s\r\n" \
        "Content-Type: multipart/form-data; boundary=%s\r\n" % \
        (token, BOUNDARY)
    if chunked:
        req += "Transfer-Encoding: chunked\r\n\r\n"
    else:
        req += "Content-Length: %d\r\n\r\n" % total
    s.sendall(req.encode())
    sent = 0
    chunk = b"h" * 16384
    payload = [head]
    while sent < size // 2:
        payload.append(chunk)
        sent += len(chunk)
    for p in payload:
        if chunked:
            s.sendall(b"%x\r\n" % len(p) + p + b"\r\n")
        else:
            s.sendall(p)
        time.sleep(0.002)
    time.sleep(0.5)
    s.close()


def drip(port, token, seconds):
    head = part("file", b"", "drip.bin", "application/octet-stream")
    head = head[:-2]
    total = len(head) + seconds + 2 + len(end())
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(("POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               "Authorization: Bearer %s\r\n"
               "Content-Type: multipart/form-data; boundary=%s\r\n"
               "Content-Length: %d\r\n\r\n" % (token, BOUNDARY, total))
              .encode() + head)
    for _ in range(seconds):
        s.sendall(b"d")
        time.sleep(1)
    s.sendall(b"\r\n" + end())
    reply = s.recv(65536).decode("latin-1")
    print(reply.split(" ")[1] if " " in reply else "none")
    s.close()


def main():
    a = sys.argv[1:]
    if a[0] == "body":
        with open(a[1], "wb") as f:
            f.write(body(a[2]))
    elif a[0] == "drip":
        drip(int(a[1]), a[2], int(a[3]))
    elif a[0] in ("half", "halfchunk"):
        half(int(a[1]), a[2], int(a[3]), a[0] == "halfchunk")
    else:
        raise SystemExit("usage: rawhttp.py body|half|halfchunk|drip ...")


if __name__ == "__main__":
    main()
