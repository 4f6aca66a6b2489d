"""An explicit nesting limit for JSON gsg reads from outside (engine flag values, streamed chunks).

Python's json raises RecursionError past its C scanner's depth, and that depth differs by release (3,000 levels
parse on 3.13 and fail on 3.12), so a limit of gsg's own keeps the answer the same on every Python it supports.
No JSON gsg reads nests deeper than a few levels.
"""

from __future__ import annotations

MAX_JSON_DEPTH = 64


def nests_deeper(text: str | bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether arrays and objects nest past `limit` levels (brackets inside strings do not count)."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if raw.count(b"[") + raw.count(b"{") <= limit:  # the usual answer, at C speed
        return False
    depth, in_string, escaped = 0, False, False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # closing quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > limit:
                return True
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return False
