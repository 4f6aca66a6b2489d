"""Echoing values from a spec in messages (pure): short, one line, and with nothing that rewrites the terminal.

A spec comes from whoever opens a pull request. A value quoted in a finding is cut to `VALUE_CHARS` characters
with its full length appended (a 20 MB `name` costs 100 bytes of output, not 20 MB in every reporter);
control characters (newline, NUL, escape sequences), bidirectional overrides (Trojan Source) and invisible
format characters (zero-width space) are written as escapes, so what the reader sees is what the file holds.
A whole message is capped at `MESSAGE_CHARS`.

Text from a GPUStack server (model, worker and instance names, state messages, versions, meta) is just as
untrusted: `untrusted` shows it inside a line, and `terminal_safe` is the last line of defence every output
sink applies to whole reports (adapters/files/output.py), so a reporter that forgets still prints nothing raw.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from gpustack_guard.core.pieced import PiecedText, map_pieces

VALUE_CHARS = 80
MESSAGE_CHARS = 1000
NAME_CHARS = 256  # a finding's spec name: any name the spec check accepts (≤ 255) shows whole
SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# C0/C1 controls and DEL; Unicode format characters (bidi embeddings/overrides/isolates, zero-width space,
# joiners, BOM, word joiner); line/paragraph separators; no-break and other non-ASCII spaces; Unicode tag
# characters (invisible text).
# past the C0 controls: C1, invisible and bidirectional characters (one list for both patterns below)
_UNSAFE_BEYOND_C0 = ("\x7f-\x9f\u00a0\u00ad\u061c\u115f\u1160\u1680\u180e\u2000-\u200f\u2028-\u202f"
                     "\u205f-\u206f\u3000\u3164\ufeff\ufff9-\ufffb\U000e0000-\U000e007f")
# A class past Latin-1 costs sre ~3.1 M instructions to compile (a 64 K charmap); ASCII text, nearly every message
# and report, is checked with the class's ASCII part and the whole class is compiled when a text needs it
# (docs/performance.md, twenty-first round). The same matches either way: the whole class's ASCII members are these.
_UNSAFE_ASCII = re.compile("[\x00-\x1f\x7f]")


@functools.cache
def _unsafe_anywhere() -> re.Pattern[str]:
    return re.compile("[\x00-\x1f" + _UNSAFE_BEYOND_C0 + "]")


def _unsafe(text: str) -> re.Pattern[str]:
    return _UNSAFE_ASCII if text.isascii() else _unsafe_anywhere()


def _escape_char(match: re.Match) -> str:
    char = match.group()
    if char in SHORT_ESCAPES:
        return SHORT_ESCAPES[char]
    if ord(char) < 0x100 and unicodedata.category(char) == "Cc":
        return f"\\x{ord(char):02x}"
    return f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}"


def escape(text: str) -> str:
    """`text` with every control, format and non-ASCII space character written as an escape (\\n, \\x00,
    \\u200b, \\u202e, \\u00a0)."""
    unsafe = _unsafe(text)
    return unsafe.sub(_escape_char, text) if unsafe.search(text) else text


def untrusted(raw: object, limit: int = MESSAGE_CHARS) -> str:
    """Text gsg did not write (a server's model name, state message, version or meta value; an echoed error
    body) as it may appear inside one line of output: one line, escaped, capped."""
    return value(raw, limit)


# The newline and tab of gsg's own layout stay; everything else `escape` rewrites is written as \uXXXX, which
# is also a JSON (and YAML double-quoted) escape of the same character: a JSON report stays valid and means
# the same, while a terminal never receives ESC, CR, backspace, BEL, C1 controls or bidi overrides raw.
_LAYOUT = {"\n", "\t"}


def _unicode_escape(match: re.Match) -> str:
    char = match.group()
    if char in _LAYOUT:
        return char
    if ord(char) > 0xFFFF:  # as JSON writes it: a surrogate pair
        high, low = divmod(ord(char) - 0x10000, 0x400)
        return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"
    return f"\\u{ord(char):04x}"


# _UNSAFE without newline and tab, which _unicode_escape gives back as they are: matching them called it once a
# line (2.5 M calls, ~3 s of profile at 10,000 specs of `validate -o json`; issue 34)
_UNSAFE_ASCII_BUT_LAYOUT = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


@functools.cache
def _unsafe_but_layout_anywhere() -> re.Pattern[str]:
    return re.compile("[\x00-\x08\x0b-\x1f" + _UNSAFE_BEYOND_C0 + "]")


# Every ASCII byte terminal_safe keeps: an ASCII text whose bytes all are in it has nothing to rewrite.
_SAFE_ASCII = bytes([9, 10, *range(0x20, 0x7F)])
# Past this size an ASCII text is checked by deleting its safe bytes (bytes.translate, ~0.2 s for 100 MB) instead
# of the class search (~1 s): the 100 MB of `validate -o json` at 10,000 specs (benchmarks/report_formats.py).
_TRANSLATE_FROM = 1 << 16


def terminal_safe(text: str) -> str:
    """Whole output (a report, a file) with every unsafe character but newline and tab written as \\uXXXX.
    Character by character, so a PiecedText's distinct pieces are each done once (core/pieced.py)."""
    if type(text) is PiecedText:
        return map_pieces(text, _terminal_safe)
    return _terminal_safe(text)


def _terminal_safe(text: str) -> str:
    if len(text) >= _TRANSLATE_FROM and text.isascii() and not text.encode("ascii").translate(None, _SAFE_ASCII):
        return text
    unsafe = _UNSAFE_ASCII_BUT_LAYOUT if text.isascii() else _unsafe_but_layout_anywhere()
    return unsafe.sub(_unicode_escape, text) if unsafe.search(text) else text


def has_unsafe(text: str) -> bool:
    """Whether `text` holds a character `escape` would rewrite (a control, format character or odd space)."""
    return _unsafe(text).search(text) is not None


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


@functools.cache  # compiled at first use: the quickstart never needs it (import budget, issue 34)
def _cut() -> re.Pattern[str]:
    return re.compile(r"…\(\d[\d,]* chars\)$")


def recut(text: str, limit: int = VALUE_CHARS) -> str:
    """An already shown text (a finding's spec name) cut shorter, keeping the original length it names."""
    cut = _cut().search(text)
    if cut is None:
        return value(text, limit)
    head = text[:cut.start()]
    return head[:limit] + cut.group() if len(head) > limit else text


def spec_name(name: str) -> str:
    """A spec's name as findings and per-spec reports show it."""
    return message(name, NAME_CHARS)


# Letters that look like Latin ones in common fonts (Cyrillic, Greek): a name mixing them is a confusable.
LOOKALIKES = str.maketrans("асеорхуіјѕԁһкмтвнАВСЕНІЈКМОРЅТХУαοικνρτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
                            "aceopxyijsdhkmtbhABCEHIJKMOPSTXYaoikvptuxABEZHIKMNOPTYX")


def name_skeleton(name: str) -> str:
    """What a name looks like, for telling confusable names apart (a reduced form of Unicode's UTS #39
    skeleton): compatibility forms folded (NFKC), case folded, Cyrillic and Greek look-alikes mapped to Latin,
    invisible format characters dropped."""
    if name.isascii():  # nearly every name: NFKC, the look-alikes and Cf characters leave ASCII as it is
        return name.lower()
    folded = unicodedata.normalize("NFKC", name).casefold().translate(LOOKALIKES)
    return "".join(c for c in folded if unicodedata.category(c) != "Cf").casefold()
