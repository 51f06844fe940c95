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

# regress/extract/mkpdf.py: a small valid PDF, written object by object
# with its cross-reference table, one page per argument, each page
# showing its argument in Helvetica.
#
#	mkpdf.py TEXT... >FILE

import sys


def page_objects(texts, font):
    """Page and content stream objects, two per page, from object 3."""
    objs = []
    for i, text in enumerate(texts):
        content = "BT /F1 24 Tf 72 700 Td (%s) Tj ET" % text
        objs.append("<< /Type /Page /Parent 2 0 R "
                    "/MediaBox [0 0 612 792] "
                    "/Resources << /Font << /F1 %d 0 R >> >> "
                    "/Contents %d 0 R >>" % (font, 4 + 2 * i))
        objs.append("<< /Length %d >>\nstream\n%s\nendstream"
                    % (len(content), content))
    return objs


def pdf(texts):
    n = len(texts)
    font = 3 + 2 * n
    kids = " ".join("%d 0 R" % (3 + 2 * i) for i in range(n))
    objs = ["<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, n)]
    objs += page_objects(texts, font)
    objs.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = b"%PDF-1.4\n"
    offsets = []
    for num, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += ("%d 0 obj\n%s\nendobj\n" % (num, body)).encode()
    xref = len(out)
    out += ("xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)).encode()
    for off in offsets:
        out += ("%010d 00000 n \n" % off).encode()
    out += ("trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n"
            % (len(objs) + 1, xref)).encode()
    return out


if len(sys.argv) < 2:
    sys.exit("usage: mkpdf.py TEXT...")
sys.stdout.buffer.write(pdf(sys.argv[1:]))
