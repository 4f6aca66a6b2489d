"""A log line shipped as a record (JSON lines, logfmt) unwrapped to the engine's own line (pure: text in, text out).

Log collectors and shippers wrap each line the engine printed; logparse reads the message they carry.
"""

from __future__ import annotations

import json
import re

# A log shipped as records: JSON lines (docker's json-file and fluent-bit `log`, Vector and CloudWatch `message`,
# journalctl -o json `MESSAGE`, Loki's logcli jsonl `line`, slog's `msg`) and logfmt (`msg="..."`, quotes
# escaped). The engine's line is the record's message; the first of these keys holding it is read.
RECORD_KEYS = ("log", "message", "MESSAGE", "line", "msg")
MAX_RECORD_NESTING = 2  # a record inside a record's message (fluent-bit reading docker's json-file)
LOGFMT_KEY_MAX_CHARS = 64  # a longer first word before "=" is an engine's own text, not a record's key
_LOGFMT_PAIR = re.compile(r"([A-Za-z_][A-Za-z0-9_.\-]{0," + str(LOGFMT_KEY_MAX_CHARS - 1) + r'})=("(?:[^"\\]|\\.)*"'
                          r'|[^\s"]*)(?:[ \t]+|$)')
_LOGFMT_ESCAPE = re.compile(r'\\(u[0-9a-fA-F]{4}|.)')
_LOGFMT_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}
# Go slog's own lines (ollama's) are the engine's, read as printed: they name their Go source
# (`source=server.go:594`), or put only slog's time, level and source before `msg=`
_SLOG_SOURCE = re.compile(r"\.go:\d+$")
_SLOG_HEAD = {"time", "level", "source"}


def unwrap_record(text: str) -> str:
    """The engine's line a JSON or logfmt record carries (RECORD_KEYS); any other line as it is."""
    for _ in range(MAX_RECORD_NESTING):
        inner = _record_message(text)
        if inner is None:
            break
        text = inner.rstrip("\r\n")
    return text


def _record_message(text: str) -> str | None:
    stripped = text.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        try:
            record = json.loads(stripped)
        except (ValueError, RecursionError):
            return None
        if not isinstance(record, dict):
            return None
        for key in RECORD_KEYS:
            value = record.get(key)
            if isinstance(value, str):
                return value
            # journalctl -o json gives a message that is not UTF-8 as its bytes
            if isinstance(value, list) and value and all(type(b) is int and 0 <= b < 256 for b in value):
                return bytes(value).decode("utf-8", errors="replace")
        return None
    if not stripped[:1].isalpha() or "=" not in stripped[:LOGFMT_KEY_MAX_CHARS + 1]:
        return None
    pairs: dict[str, str] = {}
    at = 0
    while at < len(stripped):  # each pair once, left to right: linear
        m = _LOGFMT_PAIR.match(stripped, at)
        if m is None:
            return None  # not logfmt (a `key=value` in an engine's own line, then words)
        pairs.setdefault(m.group(1), m.group(2))
        at = m.end()
    before = list(pairs)[:list(pairs).index("msg")] if "msg" in pairs else None
    if _SLOG_SOURCE.search(pairs.get("source", "")) or (before is not None and set(before) <= _SLOG_HEAD):
        return None
    for key in RECORD_KEYS:
        value = pairs.get(key)
        if value is not None and value.startswith('"'):
            return _LOGFMT_ESCAPE.sub(_unescape, value[1:-1])
    return None


def _unescape(m: re.Match) -> str:
    code = m.group(1)
    if code.startswith("u") and len(code) == 5:
        return chr(int(code[1:], 16))
    return _LOGFMT_ESCAPES.get(code, code)
