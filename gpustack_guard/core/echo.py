"""Echoing values from a spec in messages (pure): short, one line, and with nothing that rewrites the terminal.

A spec comes from whoever opens a pull request. A value quoted in a finding is cut to `VALUE_CHARS` characters
with its full length appended (a 20 MB `name` costs 100 bytes of output, not 20 MB in every reporter);
control characters (newline, NUL, escape sequences), bidirectional overrides (Trojan Source) and invisible
format characters (zero-width space) are written as escapes, so what the reader sees is what the file holds.
A whole message is capped at `MESSAGE_CHARS`.
"""

from __future__ import annotations

import re
import unicodedata

VALUE_CHARS = 80
MESSAGE_CHARS = 1000
NAME_CHARS = 256  # a finding's spec name: any name the spec check accepts (≤ 255) shows whole
SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# C0/C1 controls and DEL; Unicode format characters (bidi embeddings/overrides/isolates, zero-width space,
# joiners, BOM, word joiner); line/paragraph separators; no-break and other non-ASCII spaces.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u00a0\u00ad\u061c\u115f\u1160\u1680\u180e\u2000-\u200f\u2028-\u202f"
                     "\u205f-\u206f\u3000\u3164\ufeff\ufff9-\ufffb]")


def _escape_char(match: re.Match) -> str:
    char = match.group()
    return SHORT_ESCAPES.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 and
                                       unicodedata.category(char) == "Cc" else f"\\u{ord(char):04x}")


# The same characters less newline and tab, which gsg's own output is made of.
_UNSAFE_ON_SCREEN = re.compile(_UNSAFE.pattern.replace("\x00-\x1f", "\x00-\x08\x0b-\x1f"))


def _json_safe_escape(match: re.Match) -> str:
    return f"\\u{ord(match.group()):04x}"


def screen_safe(text: str) -> str:
    """The last line of defence before a terminal or a CI log (every output sink): whatever reached a report
    from a server, a log or a spec, no escape sequence, carriage return or bidi control is written raw. Newlines
    and tabs stay. The escape is `\\uXXXX`, which is also what JSON means by it, so JSON on stdout stays valid and
    equal to itself."""
    return _UNSAFE_ON_SCREEN.sub(_json_safe_escape, text) if _UNSAFE_ON_SCREEN.search(text) else text


def escape(text: str) -> str:
    """`text` with every control, format and non-ASCII space character written as an escape (\\n, \\x00,
    \\u200b, \\u202e, \\u00a0)."""
    return _UNSAFE.sub(_escape_char, text) if _UNSAFE.search(text) else text


def value(raw: object, limit: int = VALUE_CHARS) -> str:
    """A value as it may appear inside a message: str() of it, cut, escaped. Cut first (the cost of a huge
    value is its prefix only), then escaped (so an escape is never cut in half)."""
    text = raw if isinstance(raw, str) else str(raw)
    if len(text) > limit:
        return f"{escape(text[:limit])}…({len(text):,} chars)"
    return escape(text)


def message(text: str, limit: int = MESSAGE_CHARS) -> str:
    """A whole message (or fix, or spec name): escaped and capped; unchanged in the common case."""
    return value(text, limit)


_CUT = re.compile(r"…\(\d[\d,]* chars\)$")


def recut(text: str, limit: int = VALUE_CHARS) -> str:
    """An already shown text (a finding's spec name) cut shorter, keeping the original length it names."""
    cut = _CUT.search(text)
    if cut is None:
        return value(text, limit)
    head = text[:cut.start()]
    return head[:limit] + cut.group() if len(head) > limit else text


def spec_name(name: str) -> str:
    """A spec's name as findings and per-spec reports show it."""
    return message(name, NAME_CHARS)


def yaml_comment(text: str) -> str:
    """One YAML comment line holding `text`: whatever a server put in it (a version with a newline, a meta value
    with YAML lines), it stays inside the comment, never a key of the file."""
    return "# " + escape(text) + "\n"
