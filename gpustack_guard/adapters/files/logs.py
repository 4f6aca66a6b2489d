"""Reading an engine's log file for gsg verify: streaming, with a size, a line-count and a line-length cap.

Only the start-up part of a log carries the figures verify reads, so a long log is read from its beginning up to
the caps and the rest is left unread (said in a note); a binary or empty file is one line naming it.
"""

from __future__ import annotations

import codecs
import os
import re
from dataclasses import dataclass, field
from typing import Iterator, Mapping

from gpustack_guard.adapters.files.regular_file import Unreadable, open_regular
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.values import frozen_value

MiB = 1024**2
CHUNK_BYTES = 64 * 1024  # one read; the memory held is a chunk plus one capped line
UNFINISHED_NOTE = "the log stops mid-line, in a number: that number was not read"
BINARY_PROBE_BYTES = 8192  # a NUL byte in the first 8 KiB: not a text log (what `git` and `file` look at)


@frozen_value(eq=True, repr=True)
class LogLimits:
    """How much of a log gsg reads; each can be set from the environment."""

    max_bytes: int = 32 * MiB  # a start-up log is kilobytes; a server's whole history can be gigabytes
    max_lines: int = 500_000  # llama.cpp at -lv 4 prints a few lines per tensor: tens of thousands
    max_line_bytes: int = 32 * 1024  # vLLM's args and SGLang's server_args lines are 5-15 KiB

    ENV = {"max_bytes": "GSG_MAX_LOG_BYTES", "max_lines": "GSG_MAX_LOG_LINES",
           "max_line_bytes": "GSG_MAX_LOG_LINE_BYTES"}

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> LogLimits:
        values: dict[str, int] = {}
        for name, variable in cls.ENV.items():
            text = environ.get(variable, "").strip()
            if not text:
                continue
            # ASCII digits, at most 18: int() refuses '²' (which isdigit() takes) and more than 4,300 digits
            if not (text.isascii() and text.isdigit()) or len(text) > 18 or int(text) <= 0:
                raise GsgError(f"{variable} must be a positive whole number, not '{text[:40]}'")
            values[name] = int(text)
        return cls(**values)


@dataclass
class LogReading:
    """What reading a log left out, for the report's notes."""

    bytes_read: int = 0
    lines: int = 0
    lines_cut: int = 0
    redraws: int = 0  # pieces a lone CR ended (LineSplitter.redraws)
    stopped: str | None = None  # why reading stopped before the end of the file
    unfinished: bool = False  # the file ends inside a number (no newline): the engine was still writing it
    notes: list[str] = field(default_factory=list)


def read_log_lines(path: str, limits: LogLimits, reading: LogReading) -> Iterator[str]:
    """The log's lines as text (undecodable bytes replaced), each at most `max_line_bytes` long."""
    # a regular file only, opened without blocking: a FIFO would wait for a writer forever, /dev/zero never ends
    try:
        handle = open_regular(path)
    except Unreadable as exc:
        reason = "file not found" if str(exc) == "no such file or directory" else str(exc)
        raise GsgError(reason, where=path) from None
    try:
        yield from _lines(handle, path, limits, reading)
    finally:
        handle.close()
    _note_limits(reading, limits)


def _lines(handle, path: str, limits: LogLimits, reading: LogReading) -> Iterator[str]:
    splitter = LineSplitter(limits)
    while not splitter.line_cap_hit:
        room = limits.max_bytes - reading.bytes_read
        if room <= 0:
            reading.stopped = "bytes"
            break
        try:
            chunk = handle.read(min(CHUNK_BYTES, room))
        except OSError as exc:
            raise GsgError(f"cannot read: {exc.strerror or exc}", where=path) from None
        if not chunk:
            if reading.bytes_read == 0:
                raise GsgError("the log is empty", where=path)
            break
        lines = splitter.split(chunk)
        if splitter.binary_at is not None:
            raise GsgError(splitter.binary_problem(), where=path)
        reading.bytes_read += len(chunk)
        yield from lines
    if splitter.line_cap_hit:
        reading.stopped = "lines"
    else:  # the line the byte cap or the end of the file stopped in, read as far as it came
        yield from splitter.rest()
        if splitter.binary_at is not None:  # NUL bytes and nothing else
            raise GsgError(splitter.binary_problem(), where=path)
        reading.unfinished = splitter.unfinished and reading.stopped is None
    reading.lines, reading.lines_cut, reading.redraws = splitter.lines, splitter.lines_cut, splitter.redraws


class LineSplitter:
    """Bytes in, lines out, as `gsg verify` reads every log (a file, or an instance's log streamed from GPUStack):
    a NUL byte in the first BINARY_PROBE_BYTES is binary data, a line longer than `max_line_bytes` is cut (its
    rest dropped up to its newline), and no line past `max_lines` is given."""

    def __init__(self, limits: LogLimits):
        self.limits = limits
        self.pending = bytearray()
        self.overflow = False  # the current line passed the cap: its rest is dropped up to its newline
        self.offset = 0  # bytes taken so far
        self.binary_at: int | None = None
        self.lines = 0
        self.lines_cut = 0
        self.line_cap_hit = False
        self.unfinished = False  # the input stopped inside a number: that word was dropped
        self.text_at = 0  # NUL bytes skipped before the text (_opening)
        self.decoder: codecs.IncrementalDecoder | None = None  # a UTF-16 log's, from its byte-order mark
        self.held: str | None = None  # a piece a CR ended, until the next byte says CRLF (a line) or a redraw
        # the redraws given (pieces a lone CR ended): no line of their own, but each is parsed, so max_lines counts
        # them too; else a log of CRs alone (a progress bar, a CR-only file) had no cap but the bytes
        self.redraws = 0
        # the first bytes while they may still be part of a byte-order mark: a log streamed in pieces (GPUStack's
        # answer read as it comes) split one, and a UTF-16 log read a byte at a time was "not a text log"
        self.opening = b""
        self.started = False  # the text began (a byte-order mark counts): NUL bytes from here on are binary data

    def binary_problem(self) -> str:
        """What a reader says of a log found binary (`binary_at` set), wherever it read it from."""
        return f"not a text log (binary data at byte {self.binary_at or 0:,})"

    def split(self, chunk: bytes) -> Iterator[str]:
        """The lines this chunk completes (none once binary data or the line cap is met). The binary probe runs
        now, before the lines are asked for, so `binary_at` is set when this returns."""
        if not self.started:  # nothing but NUL bytes so far, if anything
            chunk = self._opening(self.opening + chunk)
        if self.decoder is not None:  # UTF-16 as PowerShell's `>` writes it: read as the UTF-8 it stands for
            chunk = self.decoder.decode(chunk).encode("utf-8", "replace")
        if self.offset < BINARY_PROBE_BYTES:
            nul = chunk[:BINARY_PROBE_BYTES - self.offset].find(b"\x00")
            if nul >= 0:
                self.binary_at = self.text_at + self.offset + nul
        self.offset += len(chunk)
        return iter(()) if self.binary_at is not None else self._split(chunk)

    def _opening(self, chunk: bytes) -> bytes:
        """The first bytes: a leading run of NUL bytes is skipped (a log rotated by copying and truncating, the
        engine still writing at its old offset: the hole reads as NULs), and a byte-order mark is read."""
        text = chunk.lstrip(b"\x00")
        self.text_at += len(chunk) - len(text)
        self.opening = b""
        if text and any(len(text) < len(bom) and bom.startswith(text) for bom in _BOMS):
            self.opening = text  # held until the next piece (or the end) says whether it is one
            return b""
        self.started = bool(text)
        if text.startswith(codecs.BOM_UTF8):
            return text[len(codecs.BOM_UTF8):]
        if text.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            self.decoder = codecs.getincrementaldecoder("utf-16")("replace")
        return text

    def _split(self, chunk: bytes) -> Iterator[str]:
        start = 0
        while not self.line_cap_hit:
            found = _LINE_BREAK.search(chunk, start)
            end = found.start() if found else len(chunk)
            if self.held is not None and (end > start or (found and chunk[end] == _CR)):
                yield from self._release(line_ended=False)  # more of the same line after a redraw
            piece = chunk[start:end]
            if not self.overflow:
                space = self._line_cap(piece) - len(self.pending)
                self.overflow = len(piece) > space
                self.pending += piece[:space]
            if found is None:
                return
            start = end + 1
            if chunk[end] == _LF and self.held is not None:  # the LF of a CRLF: the held piece ended its line
                yield from self._release(line_ended=True)
                continue
            if chunk[end] == _CR:  # CR: a redraw or a CRLF; which one, the next byte says (held until then)
                self.held = (whole_words(self.pending) if self.overflow else self.pending).decode("utf-8", "replace")
                self.lines_cut += self.overflow
                self.pending, self.overflow = bytearray(), False
                continue
            yield from self._emit(whole_words(self.pending) if self.overflow else self.pending)

    def _line_cap(self, piece: bytes) -> int:
        """max_line_bytes; for a log that opens with a JSON array of entries in one line (Grafana's JSON download,
        log_records.ENTRY_PAYLOADS), max_bytes: that line is the whole log, read whole as the gcloud dump is."""
        if self.lines or self.redraws or self.held is not None:
            return self.limits.max_line_bytes
        opening = bytes(self.pending[:2]) if len(self.pending) >= 2 else bytes(self.pending) + piece[:2]
        return self.limits.max_bytes if opening[:2] == b"[{" else self.limits.max_line_bytes

    def _release(self, line_ended: bool) -> Iterator[str]:
        """The piece a CR ended: a line of its own before an LF (CRLF); else a piece of the line, given with its CR
        (parse_log counts it in the line that goes on: a progress bar's redraws, a CR-only log's lines)."""
        held, self.held = self.held or "", None
        if line_ended:
            yield from self._emit_text(held)
        elif self._room():
            self.redraws += 1
            yield held + "\r"

    def rest(self) -> Iterator[str]:
        """The line the input stopped in (no newline: a cap, or a log still being written), up to its last whole
        word (whole_words)."""
        if self.opening:  # the log ended inside what could have been a byte-order mark: it was text
            opening, self.opening, self.started = self.opening, b"", True
            self.offset = len(opening)
            self.pending += opening
        if not self.started and self.text_at:  # NUL bytes only: not a log with a hole in front
            self.binary_at = 0
        if self.held is not None and self.binary_at is None:
            yield from self._release(line_ended=not (self.pending or self.overflow))
        if (self.pending or self.overflow) and self.binary_at is None and not self.line_cap_hit:
            whole = whole_words(self.pending)
            self.unfinished = len(whole) < len(self.pending)
            yield from self._emit(whole)

    def _emit(self, raw: bytearray) -> Iterator[str]:
        self.lines_cut += self.overflow
        self.pending, self.overflow = bytearray(), False
        yield from self._emit_text(bytes(raw).decode("utf-8", errors="replace"))

    def _emit_text(self, text: str) -> Iterator[str]:
        if self._room():
            self.lines += 1
            yield text

    def _room(self) -> bool:
        """Whether max_lines lets one more line or redraw through (line_cap_hit is set once it does not)."""
        self.line_cap_hit = self.line_cap_hit or self.lines + self.redraws >= self.limits.max_lines
        return not self.line_cap_hit


_LINE_BREAK = re.compile(rb"[\r\n]")
_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_LF, _CR = ord("\n"), ord("\r")  # the bytes _LINE_BREAK finds, as indexing bytes gives them
_WORD_END = (b" ", b"\t", b",", b"(", b"[", b"{", b"=", b":")


def whole_words(raw: bytearray) -> bytearray:
    """A line cut short (by a cap, or by the end of a log still being written) without the word it was cut in
    when that word holds a digit: it may be a number cut short (`158,656 tokens` cut to `158,6`), which would be
    read as a wrong figure; a figure lost is reported as missing, a wrong one would not be. A word without
    digits stays (a cut unit or marker matches no pattern)."""
    end = max(raw.rfind(sep) for sep in _WORD_END)
    last = raw[end + 1:]
    if not any(48 <= byte <= 57 for byte in last):  # no ASCII digit
        return raw
    return raw[:end + 1] if end >= 0 else bytearray()


def line_cap_note(max_lines: int, redraws: int) -> str:
    """What a reader says when max_lines stopped it (LineSplitter.line_cap_hit), wherever it read the log from."""
    of_them = f", {redraws:,} of them a terminal's redraws (pieces a lone CR ended)" if redraws else ""
    return f"read the first {max_lines:,} lines only{of_them} (GSG_MAX_LOG_LINES)"


def _note_limits(reading: LogReading, limits: LogLimits) -> None:
    if reading.stopped == "bytes":
        reading.notes.append(f"read the first {limits.max_bytes / MiB:g} MiB only (GSG_MAX_LOG_BYTES)")
    elif reading.stopped == "lines":
        reading.notes.append(line_cap_note(limits.max_lines, reading.redraws))
    if reading.unfinished:
        reading.notes.append(UNFINISHED_NOTE)
    if reading.lines_cut:
        reading.notes.append(f"{reading.lines_cut:,} line(s) longer than {limits.max_line_bytes:,} bytes were cut "
                             f"(GSG_MAX_LOG_LINE_BYTES)")
