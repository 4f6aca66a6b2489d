"""The one line splitter of `gsg verify`'s logs, a file or an instance's stream (files/logs.LineSplitter): the
binary probe over chunk boundaries, the line-length and line-count caps, and the line a stop cut."""

import pytest

from gpustack_guard.adapters.files.logs import (
    BINARY_PROBE_BYTES,
    LineSplitter,
    LogLimits,
    LogReading,
    read_log_lines,
)


def split(chunks: list[bytes], **limits: int) -> tuple[LineSplitter, list[str]]:
    splitter = LineSplitter(LogLimits(**limits))
    lines = [line for chunk in chunks for line in splitter.split(chunk)]
    return splitter, lines + list(splitter.rest())


@pytest.mark.parametrize("nul_at, binary", [
    (1, True), (BINARY_PROBE_BYTES - 1, True),  # the last byte of the probe, in the second chunk
    (BINARY_PROBE_BYTES, False), (BINARY_PROBE_BYTES + 1, False),  # past the probe: text with a stray byte
])
def test_the_binary_probe_spans_chunks(nul_at, binary):
    data = b"a" * nul_at + b"\x00" + b"b\n"
    half = BINARY_PROBE_BYTES // 2  # the NUL comes in the second chunk unless it is at 1
    splitter, lines = split([data[:half], data[half:]])
    assert splitter.binary_at == (nul_at if binary else None)
    assert lines == ([] if binary else ["a" * nul_at + "\x00b"])


@pytest.mark.parametrize("count, cap, given, hit", [(2, 3, 2, False), (3, 3, 3, False), (4, 3, 3, True)])
def test_the_line_cap_gives_exactly_that_many_lines(count, cap, given, hit):
    splitter, lines = split([b"x\n" * count], max_lines=cap)
    assert (len(lines), splitter.lines, splitter.line_cap_hit) == (given, given, hit)


@pytest.mark.parametrize("data, given, lines, redraws, hit", [
    (b"a\rb\rc\rd\r", ["a\r", "b\r", "c\r"], 0, 3, True),  # CRs alone: every piece is parsed, so each counts
    (b"a\rb\rc\nd\n", ["a\r", "b\r", "c"], 1, 2, True),  # a progress bar's redraws, then its line
    (b"a\rb\nc\n", ["a\r", "b", "c"], 2, 1, False),
    (b"a\r\nb\r\nc\r\nd\r\n", ["a", "b", "c"], 3, 0, True),  # CRLF: lines, no redraws
])
def test_the_line_cap_counts_a_lone_crs_redraws(data, given, lines, redraws, hit):
    splitter, out = split([data], max_lines=3)
    assert (out, splitter.lines, splitter.redraws, splitter.line_cap_hit) == (given, lines, redraws, hit)


def test_a_log_of_redraws_alone_stops_at_the_line_cap_and_says_so(tmp_path):
    path = tmp_path / "bar.log"
    path.write_bytes(b"x\r" * 10)
    reading = LogReading()
    assert list(read_log_lines(str(path), LogLimits(max_lines=4), reading)) == ["x\r"] * 4
    assert (reading.stopped, reading.lines, reading.redraws) == ("lines", 0, 4)
    assert reading.notes == ["read the first 4 lines only, 4 of them a terminal's redraws (pieces a lone CR ended) "
                             "(GSG_MAX_LOG_LINES)"]


@pytest.mark.parametrize("line, cap, shown, cut", [
    (b"abc", 3, "abc", 0), (b"abcd", 3, "abc", 1),  # no digit in the cut word: it stays as far as it came
    (b"n=1234", 4, "n=", 1),  # cut inside a number: the number goes
])
def test_the_line_length_cap_cuts_and_counts(line, cap, shown, cut):
    splitter, lines = split([line + b"\nnx\n"], max_line_bytes=cap)
    assert lines == [shown, "nx"] and splitter.lines_cut == cut


def test_a_file_and_a_stream_split_alike(tmp_path):
    data = b"first\n" + b"y" * 50 + b"\nGPU KV cache size: 158,6"
    path = tmp_path / "cut.log"
    path.write_bytes(data)
    reading = LogReading()
    from_file = list(read_log_lines(str(path), LogLimits(max_line_bytes=20), reading))
    splitter, streamed = split([data[:7], data[7:30], data[30:]], max_line_bytes=20)
    # the last line is cut by the cap too (24 bytes), and inside a number: both counted, both said
    assert from_file == streamed == ["first", "y" * 20, "GPU KV cache size: "]
    assert (reading.lines, reading.lines_cut, reading.unfinished) == (3, 2, True)
    assert (splitter.lines, splitter.lines_cut, splitter.unfinished) == (3, 2, True)


LOG = "INFO 05-01 vllm: é KV cache 12,345 tokens\nINFO 05-01 done\n"
ENCODED = {
    "UTF-16 LE with BOM": LOG.encode("utf-16-le").join([b"\xff\xfe", b""]),
    "UTF-16 BE with BOM": LOG.encode("utf-16-be").join([b"\xfe\xff", b""]),
    "UTF-8 with BOM": b"\xef\xbb\xbf" + LOG.encode(),
    "NUL hole, then UTF-16 LE": b"\x00" * 7 + b"\xff\xfe" + LOG.encode("utf-16-le"),
}


@pytest.mark.parametrize("encoded", ENCODED.values(), ids=ENCODED.keys())
@pytest.mark.parametrize("piece", [1, 2, 3, 5])
def test_a_log_in_pieces_reads_as_the_log_in_one_piece_whatever_its_encoding(encoded, piece):
    """A stream split the byte-order mark (or took it as a chunk of its own): before, a UTF-16 log read a byte at a
    time was "not a text log (binary data at byte 33)", and a UTF-8 one began with U+FEFF."""
    splitter, lines = split([encoded[i:i + piece] for i in range(0, len(encoded), piece)])
    assert (splitter.binary_at, lines) == (None, ["INFO 05-01 vllm: é KV cache 12,345 tokens", "INFO 05-01 done"])


@pytest.mark.parametrize("data, lines", [
    # a log that ends inside what could have been a byte-order mark is text, as in one piece
    (b"\xef", ["\ufffd"]), (b"\xef\xbb", ["\ufffd"]), (b"\xff", ["\ufffd"]), (b"\x00\x00\xfe", ["\ufffd"]),
    # a first byte a BOM begins with, then text that is none
    (b"\xefINFO\n", ["\ufffdINFO"]), (b"\xfeINFO\n", ["\ufffdINFO"]),
])
@pytest.mark.parametrize("piece", [1, 2, 100])
def test_the_opening_bytes_held_for_a_bom_are_never_lost(data, lines, piece):
    splitter, got = split([data[i:i + piece] for i in range(0, len(data), piece)])
    assert (splitter.binary_at, got) == (None, lines)


def test_nul_bytes_alone_in_pieces_are_still_binary():
    splitter, got = split([b"\x00"] * 5)
    assert (splitter.binary_at, got) == (0, [])
