"""The headless-browser checks of the HTML reports (soak, memory picture): Debian's Chromium, and a PNG decoder
(no Pillow) to tell a painted screenshot from a blank one."""

from __future__ import annotations

import shutil
import struct
import zlib
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or \
    ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
NO_CHROMIUM = "Chromium is not installed (apt-get install chromium; .ci/run does)"


def png_rows(data: bytes) -> tuple[int, int, int, list[bytes]]:
    """(width, height, channels, unfiltered rows) of an 8-bit RGB/RGBA PNG, what Chromium writes."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, channels = 8, b"", 0, 0, 3
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, previous = zlib.decompress(idat), width * channels, [], bytes(width * channels)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):  # the five scanline filters of the PNG specification
            left = line[x - channels] if x >= channels else 0
            up, corner = previous[x], previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 255
            elif kind == 2:
                line[x] = (line[x] + up) & 255
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[x] = (line[x] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def sampled_pixels(data: bytes, step: int = 4) -> list[tuple[int, ...]]:
    """RGB of every `step`-th pixel of every `step`-th row."""
    width, _, channels, rows = png_rows(data)
    return [tuple(row[x * channels:x * channels + 3]) for row in rows[::step] for x in range(0, width, step)]
