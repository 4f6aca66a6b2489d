"""Running instances' start-up logs from GPUStack, for `gsg verify SPECS`.

Which instances run (one paged list), and each one's log read from its first line as it arrives, split into lines
under the same limits as `gsg verify --log` (LogLimits: bytes, lines, line length) and the request deadline. Only
the start-up part is needed: reading stops once the caller has it, at a cap, or at the deadline, each said in a
note. Whatever the server answers (refusals, an empty or binary log, an endless answer) is one line for that
instance, never a stop of the command.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from gpustack_guard.adapters.files.logs import UNFINISHED_NOTE, LineSplitter, LogLimits, MiB, line_cap_note
from gpustack_guard.adapters.gpustack import client as C
from gpustack_guard.adapters.gpustack.client import INT64_MAX, ApiError, GPUStackClient, kind_of
from gpustack_guard.adapters.gpustack.transport import printable
from gpustack_guard.core.values import frozen_value

INSTANCES = "/v2/model-instances"
# The `limit` of lines asked for: a start-up log is hundreds of lines, llama.cpp at -lv 4 tens of thousands
START_UP_LOG_LINES = 100_000
# GPUStack's log proxy writes its own failure into the stream after this terminal escape (routes/model_instances.py)
PROXY_FAILURE_MARK = "\x1b[999;1H"


@frozen_value(eq=True, repr=True)
class LiveInstance:
    """A model instance as verify needs it: where it runs (main worker first, then subordinate workers)."""

    id: int
    name: str
    model_id: int | None
    model_name: str
    state: str
    places: tuple[tuple[str, tuple[int, ...]], ...]  # (worker name, GPU indexes)

    @property
    def worker(self) -> str:
        return self.places[0][0] if self.places else ""


def _text(item: dict, key: str, index: int) -> str:
    value = item.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ApiError("GET", INSTANCES, f"item {index}: field '{key}' is {kind_of(value)}, expected text")
    return value


def _integer(item: dict, key: str, index: int, required: bool = False) -> int | None:
    value = item.get(key)
    if value is None and not required:
        return None
    if type(value) is not int or not 0 <= value <= INT64_MAX:
        raise ApiError("GET", INSTANCES, f"item {index}: field '{key}' is {kind_of(value)}, expected an integer >= 0")
    return value


def _place(raw: Any, index: int) -> tuple[str, tuple[int, ...]] | None:
    if not isinstance(raw, dict):
        return None
    worker = _text(raw, "worker_name", index)
    gpus = raw.get("gpu_indexes") or []
    if not isinstance(gpus, list) or not all(type(g) is int and 0 <= g <= INT64_MAX for g in gpus):
        raise ApiError("GET", INSTANCES, f"item {index}: field 'gpu_indexes' is not a list of integers >= 0")
    return (worker, tuple(gpus)) if worker else None


def _instance(index: int, raw: Any) -> LiveInstance:
    if not isinstance(raw, dict):
        raise ApiError("GET", INSTANCES, f"item {index} is {kind_of(raw)}, not an instance object")
    places = [_place(raw, index)]
    servers = raw.get("distributed_servers")
    subordinates = servers.get("subordinate_workers") if isinstance(servers, dict) else None
    places += [_place(sub, index) for sub in subordinates or [] if isinstance(subordinates, list)]
    found_id = _integer(raw, "id", index, required=True)
    assert found_id is not None
    return LiveInstance(found_id, _text(raw, "name", index) or f"#{found_id}", _integer(raw, "model_id", index),
                        _text(raw, "model_name", index), (_text(raw, "state", index) or "unknown").lower(),
                        tuple(p for p in places if p is not None))


def live_instances(client: GPUStackClient) -> list[LiveInstance]:
    """Every model instance, with its id (the log endpoint's key), state and GPUs."""
    return client.model_instances(keep=_instance)


@dataclass
class LogRead:
    """What reading one instance's log gave: lines fed, notes on what was left unread, or why nothing was."""

    lines: int = 0
    bytes_read: int = 0
    notes: list[str] = field(default_factory=list)
    problem: str | None = None  # the one line for an instance whose log could not be used


# A refusal of these after the instance was listed: it was removed or restarted (a new run) in between
GONE_STATUSES = (404, 409, 410)
GONE_HINT = "the instance may have been restarted or removed since it was listed; run verify again"
# A whole answer this short that is one JSON document is the server's (an error object, a proxy's answer), not
# the engine's; longer, it is left to the parser (which finds no start-up line in it)
JSON_LOG_MAX_BYTES = 64 * 1024

# the longest first: take() holds back that many bytes to tell; a page may open with its head, body or a comment
_HTML_STARTS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<!--")
HTML_LOG = "an HTML page, not a log (a login page or proxy in front of GPUStack?)"


class _LiveLines:
    """The stream's bytes through the shared LineSplitter (the caps and binary probe of --log) to `feed`, with
    GPUStack's own failure line taken out of the engine's lines."""

    def __init__(self, limits: LogLimits, feed: Callable[[str], bool]):
        self.splitter = LineSplitter(limits)
        self.feed = feed
        self.stopped_by_reader = False
        self.proxy_failure: str | None = None
        self.opening: bytes | None = b""  # the answer's first bytes, until they show whether it is an HTML page
        self.html = False
        self.head = bytearray()  # the answer's first bytes, kept while short (_json_problem)

    def take(self, chunk: bytes) -> bool:
        """One chunk of the answer; False to stop the stream (binary data, the line cap, an HTML page, or the
        reader has enough)."""
        if len(self.head) <= JSON_LOG_MAX_BYTES:
            self.head += chunk[:JSON_LOG_MAX_BYTES + 1 - len(self.head)]
        if self.opening is None:
            return self._split(chunk)
        self.opening += chunk
        if len(self.opening.lstrip()) < len(_HTML_STARTS[0]) and len(self.opening) < 1024:
            return True  # too little yet to tell: held back, a few bytes
        return self._opened()

    def _opened(self) -> bool:
        """The held-back opening: an HTML page (a login or proxy page answered with 200) stops the read."""
        assert self.opening is not None
        chunk, self.opening = self.opening, None
        if chunk.lstrip()[:len(_HTML_STARTS[0])].lower().startswith(_HTML_STARTS):
            self.html = True
            return False
        return self._split(chunk)

    def _split(self, chunk: bytes) -> bool:
        for line in self.splitter.split(chunk):
            if not self._line(line):
                self.stopped_by_reader = True
                return False
        return self.splitter.binary_at is None and not self.splitter.line_cap_hit

    def flush_opening(self) -> None:
        """An answer that ended within what take() holds back: judged and split now."""
        if self.opening:
            self._opened()  # _split marks a stop by the reader itself
        self.opening = None

    def finish(self) -> None:
        if not self.stopped_by_reader:  # a log that stops mid-line
            for line in self.splitter.rest():
                self._line(line)

    def _line(self, line: str) -> bool:
        if line.startswith(PROXY_FAILURE_MARK):  # the server's own failure, not the engine's line
            self.proxy_failure = line[len(PROXY_FAILURE_MARK):].strip()
            return True
        return self.feed(line)


def read_instance_log(client: GPUStackClient, instance_id: int, limits: LogLimits,
                      feed: Callable[[str], bool]) -> LogRead:
    """Feed one instance's log to `feed` line by line until it returns False or a limit is reached."""
    read = LogRead()
    over = client.command_time_out()
    if over:  # asked, every later log would be "refused" by gsg itself: not read, said as what it is
        read.problem = f"not read: {over}"
        return read
    live = _LiveLines(limits, feed)
    splitter = live.splitter
    asked = min(limits.max_lines, START_UP_LOG_LINES)
    try:
        streamed = client.instance_log(instance_id, lines=asked, max_bytes=limits.max_bytes, consume=live.take)
    except ApiError as exc:
        gone = f" ({GONE_HINT})" if exc.status in GONE_STATUSES else ""
        read.problem = f"the server refused the log: {exc}{gone}"
        return read
    read.bytes_read = streamed.bytes_read
    live.flush_opening()
    if live.html:
        read.problem = HTML_LOG
        return read
    if splitter.binary_at is None:
        live.finish()  # (a log of NUL bytes only is found binary here: a leading run of them is skipped)
    if splitter.binary_at is not None:
        read.problem = splitter.binary_problem()
        return read
    read.lines = splitter.lines
    if streamed.bytes_read == 0:
        read.problem = "the log is empty (the engine has written nothing yet, or the worker keeps no log)"
        return read
    json_answer = _json_problem(bytes(live.head))
    if json_answer:
        read.problem = json_answer
        return read
    if live.proxy_failure is not None and read.lines == 1:  # nothing but the server's own failure
        read.problem = f"the server could not read the log: {printable(live.proxy_failure, 200)}"
        return read
    # the server sends at most the lines asked for: as many means the log may go on
    splitter.line_cap_hit = splitter.line_cap_hit or (read.lines >= limits.max_lines and asked == limits.max_lines)
    _note_stop(read, streamed, limits, client.limits.request_deadline, live, client.command_time_out())
    return read


def _note_stop(read: LogRead, streamed: C.StreamedText, limits: LogLimits, deadline: float,
               live: _LiveLines, command_over: str | None) -> None:
    splitter = live.splitter
    size = f"{streamed.bytes_read / MiB:.1f} MiB" if streamed.bytes_read >= MiB else f"{streamed.bytes_read:,} bytes"
    if streamed.stopped == C.STOPPED_AT_CAP:
        read.notes.append(f"read the first {limits.max_bytes / MiB:g} MiB of the log only (GSG_MAX_LOG_BYTES)")
    elif streamed.stopped == C.STOPPED_AT_DEADLINE and command_over:  # the command's limit cut it, not the request's
        read.notes.append(f"the server was still sending when {command_over}: read the first {size} only")
    elif streamed.stopped == C.STOPPED_AT_DEADLINE:
        read.notes.append(f"the server was still sending after {deadline:g}s (GSG_REQUEST_DEADLINE): read the "
                          f"first {size} only")
    elif streamed.stopped == C.STOPPED_STALLED:
        read.notes.append(f"the server stopped sending after {size}: read what came")
    elif streamed.stopped == C.STOPPED_BROKEN:
        read.notes.append(f"the connection broke after {size}: read what came")
    if splitter.line_cap_hit:
        read.notes.append(line_cap_note(limits.max_lines, splitter.redraws))
    if splitter.unfinished and streamed.stopped is None and not splitter.line_cap_hit:  # a cap says it already
        read.notes.append(UNFINISHED_NOTE)
    if splitter.lines_cut:
        read.notes.append(f"{splitter.lines_cut:,} line(s) longer than {limits.max_line_bytes:,} bytes were cut "
                          f"(GSG_MAX_LOG_LINE_BYTES)")
    if live.proxy_failure is not None:
        read.notes.append(f"the server's log stream ended with: {printable(live.proxy_failure, 200)}")


MAX_JSON_ANSWER_DEPTH = 64  # a server's error answer is a few levels deep; deeper is left to the log parser


def _nesting(text: str) -> int:
    """The deepest bracket nesting of a short text (brackets inside strings counted too: only an upper bound)."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _json_problem(head: bytes) -> str | None:
    """A short answer that is one JSON object, list or text is the server's (`{"detail": ...}` with 200, an API
    gateway's error), not a log: named, with its `detail` or `message` when it has one. JSON lines (a log an engine
    writes as JSON, one object a line) are more than one document: left to the parser."""
    if len(head) > JSON_LOG_MAX_BYTES or head.lstrip()[:1] not in (b"{", b"[", b'"'):
        return None
    text = head.decode("utf-8", "replace")
    if _nesting(text) > MAX_JSON_ANSWER_DEPTH:  # where json's own limit lies differs by Python (3.11 raises at a
        return None                              # depth 3.13 reads): the same answer on every version
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth: left to the log parser
        return None
    said = parsed.get("detail") or parsed.get("message") if isinstance(parsed, dict) else None
    told = f": {printable(str(said), 200)}" if isinstance(said, (str, int, float)) and said != "" else ""
    return f"a JSON document ({kind_of(parsed)}), not a log text{told}"
