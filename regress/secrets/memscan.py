#
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
#
# memscan.py PID SECRET: whether SECRET is anywhere in the memory of
# process PID (root reads /proc/PID/mem).  Prints "found" or "absent"
# and the number of bytes read; exits 0 when the memory could be read
# (at least one mapping), 2 when it could not.
import sys

SKIP = ("[vvar]", "[vsyscall]", "[vvar_vclock]")
CHUNK = 1 << 20
REGION_MAX = 1 << 32


def scan(pid, secret):
    read = 0
    with open("/proc/%s/maps" % pid) as maps, \
            open("/proc/%s/mem" % pid, "rb", 0) as mem:
        for line in maps:
            f = line.split()
            if "r" not in f[1] or (len(f) > 5 and f[5] in SKIP):
                continue
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            # A sanitizer's shadow memory is terabytes of reserved,
            # never-written pages: nothing of ours lives there.
            if hi - lo > REGION_MAX:
                continue
            n, hit = scan_region(mem, lo, hi, secret)
            read += n
            if hit:
                return True, read
    return False, read


def scan_region(mem, lo, hi, secret):
    """Reads [lo, hi) in chunks that overlap by len(secret) - 1, so a
    secret across a chunk boundary is still seen."""
    read, tail = 0, b""
    try:
        mem.seek(lo)
        while lo < hi:
            data = mem.read(min(CHUNK, hi - lo))
            if not data:
                break
            lo += len(data)
            read += len(data)
            if secret in tail + data:
                return read, True
            tail = data[-(len(secret) - 1):] if len(secret) > 1 else b""
    except (OSError, ValueError, OverflowError):
        pass
    return read, False


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: memscan.py PID SECRET")
    try:
        found, read = scan(sys.argv[1], sys.argv[2].encode())
    except OSError as e:
        print("cannot read process %s: %s" % (sys.argv[1], e))
        return 2
    print("%s %d" % ("found" if found else "absent", read))
    return 0 if read > 0 else 2


if __name__ == "__main__":
    sys.exit(main())
