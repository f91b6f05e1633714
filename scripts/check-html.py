#!/usr/bin/env python3
"""Judges what headless Chromium made of a page (called by scripts/check-html.sh).

Usage: check-html.py SCREENSHOT.png DOM.html CHROMIUM.log EXPECT_TABLES MIN_INK [SITE PAGE]

Fails (exit 1, one line per problem) when the screenshot is blank (less than MIN_INK of
its pixels differ from the background colour), when the browser log holds console
messages (the page has no script, and its Content-Security-Policy turns every blocked
load into one), when the rendered DOM has fewer <table> elements than EXPECT_TABLES, a
table without <caption>, a <script>, or a reference to anything outside the page; with
SITE and PAGE (a page of a site in folder SITE), a link `<a href>` to another file of the
site is allowed, and fails when it names no file inside SITE.
Standard library only: the PNG is decoded with zlib.
"""

import os
import re
import struct
import sys
import zlib
from collections import Counter
from html.parser import HTMLParser


def read_png(path):
    """(width, height, bytes per pixel, rows of raw pixel bytes) of an 8-bit PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, header = 8, [], None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        chunk = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat.append(chunk)
        elif kind == b"IEND":
            break
        pos += 12 + length
    if header is None:
        raise ValueError("PNG without IHDR")
    width, height, depth, colour, _, _, interlace = header
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(colour)
    if depth != 8 or channels is None or interlace:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {colour}, interlace {interlace})")
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    return width, height, channels, unfilter(raw, stride, height, channels)


MASKS = {}


def add_bytes(a, b, n):
    """Bytewise (a + b) mod 256 of two n-byte big-endian integers, all bytes at once."""
    if n not in MASKS:
        MASKS[n] = (int.from_bytes(b"\x7f" * n, "big"), int.from_bytes(b"\x80" * n, "big"))
    low, high = MASKS[n]
    return ((a & low) + (b & low)) ^ ((a ^ b) & high)


def unfilter(raw, stride, height, bpp):
    rows, prev = [], bytes(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]
        if kind == 0:
            row = line
        elif kind == 2:  # Up: whole-row addition (the common case, kept fast)
            if not any(line):
                row = prev
            else:
                s = add_bytes(int.from_bytes(line, "big"), int.from_bytes(prev, "big"), stride)
                row = s.to_bytes(stride, "big")
        elif kind == 1:  # Sub: a prefix sum with stride bpp, by doubling
            acc, shift = int.from_bytes(line, "big"), bpp
            while shift < stride:
                acc = add_bytes(acc, acc >> (8 * shift), stride)
                shift *= 2
            row = acc.to_bytes(stride, "big")
        elif kind in (3, 4):  # Average, Paeth: byte by byte (rare)
            out = bytearray(line)
            for i in range(stride):
                a = out[i - bpp] if i >= bpp else 0
                b = prev[i]
                if kind == 3:
                    out[i] = (out[i] + ((a + b) >> 1)) & 0xFF
                else:
                    c = prev[i - bpp] if i >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                    out[i] = (out[i] + pred) & 0xFF
            row = bytes(out)
        else:
            raise ValueError(f"bad PNG filter {kind} in row {y}")
        rows.append(row)
        prev = row
    return rows


def ink(path):
    """(share of pixels not of the background colour, background colour as hex)."""
    width, height, bpp, rows = read_png(path)
    sample = Counter(
        rows[y][x * bpp : (x + 1) * bpp] for y in range(0, height, 7) for x in range(0, width, 7)
    )
    background = sample.most_common(1)[0][0]
    plain_row = background * width
    inked = 0
    for row in rows:
        if row != plain_row:
            inked += sum(1 for i in range(0, len(row), bpp) if row[i : i + bpp] != background)
    return inked / (width * height), background.hex()


class Dom(HTMLParser):
    """Counts tables and captions; notes scripts and references that leave the page."""

    def __init__(self, site=None, page_dir=None):
        super().__init__(convert_charrefs=True)
        self.tables, self.open_tables, self.problems = 0, [], []
        # A page of a site (`--site DIR`) may link to the site's other files: a relative
        # `<a href>` that names a file inside DIR. A link is no load; it is still checked.
        self.site, self.page_dir = site, page_dir

    def site_link(self, tag, value):
        """Whether `value` is a link of a site page to a file inside the site."""
        if self.site is None or tag != "a" or value.startswith("#"):
            return False
        if ":" in value.split("/")[0] or value.startswith("/"):
            return False
        target = os.path.realpath(os.path.join(self.page_dir, value.split("#")[0]))
        if not (target + os.sep).startswith(self.site + os.sep) or not os.path.isfile(target):
            self.problems.append(f"a link to nothing in the site: <{tag} href=\"{value[:80]}\">")
        return True

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables += 1
            self.open_tables.append([self.tables, False, dict(attrs).get("id")])
        elif tag == "caption" and self.open_tables:
            self.open_tables[-1][1] = True
        elif tag == "script":
            self.problems.append("a <script> element: the page must need no JavaScript")
        for name, value in attrs:
            value = (value or "").strip()
            if name.startswith("on"):
                self.problems.append(f"an event handler <{tag} {name}=…>")
            elif name in ("src", "href", "xlink:href", "srcset", "action", "data", "poster"):
                if name == "href" and self.site_link(tag, value):
                    continue
                if not (value.startswith("#") or value.startswith("data:")):
                    self.problems.append(f"a reference out of the page: <{tag} {name}=\"{value[:80]}\">")

    def handle_endtag(self, tag):
        if tag == "table" and self.open_tables:
            number, captioned, ident = self.open_tables.pop()
            if not captioned:
                self.problems.append(f"table {number} (id {ident}) has no <caption>")


CONSOLE = re.compile(r":CONSOLE[:(]\d*\)?\]\s*(.*)")


def main(argv):
    if len(argv) not in (6, 8):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    png, dom_path, log_path, expect_tables, min_ink = argv[1:6]
    site, page = (os.path.realpath(argv[6]), argv[7]) if len(argv) == 8 else (None, None)
    expect_tables, min_ink = int(expect_tables), float(min_ink)
    problems, facts = [], []

    try:
        share, background = ink(png)
        facts.append(f"{share:.2%} of pixels inked on #{background}")
        if share < min_ink:
            problems.append(
                f"the screenshot is blank: {share:.3%} of its pixels differ from the "
                f"background #{background} (at least {min_ink:.2%} expected)"
            )
    except (OSError, ValueError, zlib.error) as e:
        problems.append(f"the screenshot cannot be read: {e}")

    with open(log_path, encoding="utf-8", errors="replace") as f:
        console = [m.group(1) for m in map(CONSOLE.search, f) if m]
    for message in console[:20]:
        problems.append(f"console: {message[:300]}")
    if len(console) > 20:
        problems.append(f"console: … and {len(console) - 20} more messages")
    facts.append(f"{len(console)} console messages")

    with open(dom_path, encoding="utf-8", errors="replace") as f:
        dom_text = f.read()
    dom = Dom(site, page and os.path.dirname(os.path.realpath(page)))
    dom.feed(dom_text)
    dom.close()
    if not dom_text.strip():
        problems.append("the browser dumped no DOM")
    facts.append(f"{dom.tables} tables")
    if dom.tables < expect_tables:
        problems.append(f"{dom.tables} <table> elements in the rendered page, {expect_tables} expected at least")
    problems.extend(dict.fromkeys(dom.problems))  # once each, in order

    print(("  ok: " if not problems else "  seen: ") + ", ".join(facts), flush=True)
    for problem in problems:
        print(f"  FAIL: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
