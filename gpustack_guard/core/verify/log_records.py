"""A log line shipped as a record (JSON lines, logfmt) unwrapped to the engine's own line (pure: text in, text out).

Log collectors and shippers wrap each line the engine printed; logparse reads the message they carry.
"""

from __future__ import annotations

import json
import re
from typing import Iterable, Iterator

# A log shipped as records: JSON lines (docker's json-file and fluent-bit `log`, Vector and CloudWatch `message`,
# journalctl -o json `MESSAGE`, Loki's logcli jsonl `line`, slog's `msg`) and logfmt (`msg="..."`, quotes
# escaped). The engine's line is the record's message; the first of these keys holding it is read.
RECORD_KEYS = ("log", "message", "MESSAGE", "line", "msg")
# a record inside a record's message (fluent-bit reading docker's json-file), and llama-server's own JSON record
# inside those two
MAX_RECORD_NESTING = 3
LOGFMT_KEY_MAX_CHARS = 64  # a longer first word before "=" is an engine's own text, not a record's key
_LOGFMT_PAIR = re.compile(r"([A-Za-z_][A-Za-z0-9_.\-]{0," + str(LOGFMT_KEY_MAX_CHARS - 1) + r'})=("(?:[^"\\]|\\.)*"'
                          r'|[^\s"]*)(?:[ \t]+|$)')
_LOGFMT_ESCAPE = re.compile(r'\\(u[0-9a-fA-F]{4}|.)')
_LOGFMT_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}
# Go slog's own lines (ollama's) are the engine's, read as printed: they name their Go source
# (`source=server.go:594`), or put only slog's time, level and source before `msg=`
_SLOG_SOURCE = re.compile(r"\.go:\d+$")
_SLOG_HEAD = {"time", "level", "source"}


# containerd's CRI log file (/var/log/pods/...): `<RFC 3339 time> <stream> <tag> <text>`; a line longer than the
# runtime's buffer (16 KiB) is written as `P` (partial) records and ends with an `F` (full) one, the pieces to join
# without a separator. The tag may carry more after a colon (cri-api's LogTag list).
CRI_RECORD = re.compile(r"(?P<time>\d{4}-\d\d-\d\dT[0-9:.]+(?:Z|[+-]\d\d:?\d\d)) (?P<stream>stdout|stderr) "
                        r"(?P<tag>[PF])(?::\S*)? ?(?P<text>.*)", re.S)
CRI_MAX_JOINED_CHARS = 1 << 20  # one line joined from partial records; past it the rest of its pieces are dropped


class CriJoiner:
    """Joins containerd's partial records back into the line the engine printed, per stream (stdout and stderr
    interleave). feed() gives the line to read, or None while a line's pieces are still coming."""

    def __init__(self) -> None:
        self.pieces: dict[str, list[str]] = {}
        self.sizes: dict[str, int] = {}
        self.cut = False  # a joined line reached CRI_MAX_JOINED_CHARS

    def feed(self, text: str) -> str | None:
        m = CRI_RECORD.fullmatch(text) if text[:1].isdigit() else None
        if m is None:
            return text
        stream, piece = m.group("stream"), m.group("text")
        size = self.sizes.get(stream, 0)
        if size + len(piece) > CRI_MAX_JOINED_CHARS:
            self.cut = True
            piece = piece[:max(CRI_MAX_JOINED_CHARS - size, 0)]
        if m.group("tag") == "P":
            self.pieces.setdefault(stream, []).append(piece)
            self.sizes[stream] = size + len(piece)
            return None
        self.sizes.pop(stream, None)
        return "".join(self.pieces.pop(stream, [])) + piece

    def rest(self) -> list[str]:
        """Lines whose last piece never came (a log cut while a long line was written)."""
        return ["".join(pieces) for pieces in self.pieces.values() if pieces]


# A log exported as one JSON array of entries. `gcloud logging read --format=json`: LogEntry objects pretty-printed
# over many lines, newest first unless --order=asc; the engine's line is textPayload, or jsonPayload.message (a
# structured payload). Grafana Explore's "Download logs" as JSON (logRowsToReadableJson, public/app/features/logs/
# utils.ts): `[{"line": ..., "timestamp": "<ns since epoch>", "fields": {...}}, ...]` in one line, in the order the
# panel showed (either order is read: the entries are sorted by timestamp).
ENTRY_PAYLOADS = (("textPayload",), ("jsonPayload", "message"), ("line",))


def unwrap_entry_array(lines: Iterable[str]) -> Iterator[str]:
    """The engine's lines of a gcloud or Grafana JSON dump, oldest first (by each entry's timestamp, as written);
    any other log's lines as they are. The dump is read whole: its size is the reader's limit (GSG_MAX_LOG_BYTES)."""
    it = iter(lines)
    head: list[str] = []
    for line in it:
        head.append(line)
        if line.strip():
            break
    if not head or head[-1].strip() not in ("[", "[]") and not head[-1].lstrip().startswith("[{"):
        yield from head
        yield from it
        return
    text = "".join(head) + "".join(it)
    entries = _entries(text)
    if entries is None:
        yield from text.splitlines(True)
        return
    for message in entries:
        yield message if message.endswith("\n") else message + "\n"


# the keys an entry's payload and order are read from: every other object (labels, fields, resource) is kept empty
# as it is parsed, so a dump of GSG_MAX_LOG_BYTES holds its lines in memory, not its labels
_ENTRY_KEYS = ("textPayload", "jsonPayload", "message", "line", "timestamp")


def _entries(text: str) -> list[str] | None:
    try:
        data = json.loads(text, object_hook=lambda obj: {key: obj[key] for key in _ENTRY_KEYS if key in obj})
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        return None
    found: list[tuple[str, str]] = []
    for entry in data:
        message = _payload(entry)
        if message is not None:
            stamp = entry.get("timestamp")
            found.append((stamp if isinstance(stamp, str) else "", message))
    if data and not found:
        return None  # an array, but not of log entries
    if found and found[0][0] > found[-1][0]:
        found.reverse()  # newest first (gcloud's default order): entries of one timestamp keep their own order
    return [message for _, message in sorted(found, key=lambda pair: pair[0])]


def _payload(entry: dict) -> str | None:
    for path in ENTRY_PAYLOADS:
        value: object = entry
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, str):
            return value
    return None


def unwrap_record(text: str) -> str:
    """The engine's line a JSON or logfmt record carries (RECORD_KEYS); any other line as it is."""
    for _ in range(MAX_RECORD_NESTING):
        inner = _record_message(text)
        if inner is None:
            break
        text = inner.rstrip("\r\n")
    return text


# llama-server's own JSON log (its default until autumn 2024: examples/server/utils.hpp server_log in the sdists of
# llama-cpp-python 0.1.78 to 0.2.85): timestamp, level, function, the source line as a number, "message" (then
# "msg"), and the record's figures as further keys ({"message":"build info","build":1702,"commit":"6f35a4a"}). It is
# read as `--log-format text` prints the same record, "build info | build=1702 commit=\"6f35a4a\"", so its figures are
# read as that line's are; a shipper's record has no numeric "line"
_LLAMA_SERVER_HEAD = ("tid", "timestamp", "level", "function", "line", "message", "msg")
# A collector's prefix before such a record (`kubectl logs --timestamps`, `docker compose logs`, journald: at most
# this many characters) is dropped with the record's own head: the record is llama-server's only if it has that head
# (a line int, a function, a level), so an engine's own line with a brace in it is read as printed
COLLECTOR_PREFIX_MAX_CHARS = 128


def _llama_server_record(record: dict) -> str | None:
    message = record.get("msg", record.get("message"))
    if not (isinstance(message, str) and type(record.get("line")) is int and isinstance(record.get("function"), str)
            and "level" in record):
        return None
    extra = " ".join(f"{key}={json.dumps(value)}" for key, value in record.items() if key not in _LLAMA_SERVER_HEAD)
    return f"{message} | {extra}" if extra else message


def _record_message(text: str) -> str | None:
    stripped = text.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        try:
            record = json.loads(stripped)
        except (ValueError, RecursionError):
            return None
        if not isinstance(record, dict):
            return None
        own = _llama_server_record(record)
        if own is not None:
            return own
        for key in RECORD_KEYS:
            value = record.get(key)
            if isinstance(value, str):
                return value
            # journalctl -o json gives a message that is not UTF-8 as its bytes
            if isinstance(value, list) and value and all(type(b) is int and 0 <= b < 256 for b in value):
                return bytes(value).decode("utf-8", errors="replace")
        return None
    if stripped.endswith("}"):  # a prefix may hold braces of its own (logcli's labels): each one up to the limit
        brace = stripped.find("{", 1, COLLECTOR_PREFIX_MAX_CHARS + 1)
        while brace > 0:
            try:
                prefixed = json.loads(stripped[brace:])
            except (ValueError, RecursionError):
                prefixed = None
            own = _llama_server_record(prefixed) if isinstance(prefixed, dict) else None
            if own is not None:
                return own
            brace = stripped.find("{", brace + 1, COLLECTOR_PREFIX_MAX_CHARS + 1)
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
