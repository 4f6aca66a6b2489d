"""The sift of a log line (core/verify/sift.py): the patterns it gives are those every text test on the line
itself gives, whatever shapes it met before, and the shapes it keeps are bounded."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify import sift
from gpustack_guard.core.verify.logparse import LogParser, parse_log

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "logs"
ACCESS = 'INFO:     127.0.0.1:52814 - "POST /v1/chat/completions HTTP/1.1" 200 OK'
STATS = ("INFO 06-01 12:00:00 [loggers.py:116] Engine 000: Avg prompt throughput: 1.0 tokens/s, KV cache usage: "
         "3.1%, Prefix cache hit rate: 0.0%")


def every_text_tested(line: str, engines) -> set[str]:
    """What the parser searched before the sift: the keyword gate and each pattern's texts, on the line."""
    if len(line) > sift.MAX_TERM_LINE_CHARS:
        pool = [p for p in P.ALL_PATTERNS if p.kind in sift.LONG_LINE_KINDS]
    elif any(word in line for word in sift.KEYWORDS):
        pool = list(P.ALL_PATTERNS)
    else:
        return set()
    return {p.id for p in pool if (not p.engine or p.engine in engines) and p.needle in line
            and (len(p.needles) <= 1 or any(text in line for text in p.needles))}


def sifted(sifter: sift.Sifter, line: str) -> set[str]:
    """The candidates whose texts the line holds (LogParser._search tests them on the line)."""
    return {p.id for p in sifter.candidates(line) if p.needle in line
            and (len(p.needles) <= 1 or any(text in line for text in p.needles))}


def corpus() -> list[str]:
    lines = [p.example for p in P.ALL_PATTERNS]
    for path in sorted(FIXTURES.rglob("*.log")):  # the 276 public start-up logs
        lines += path.read_text(encoding="utf-8", errors="replace").splitlines()
    return lines


@pytest.mark.parametrize("engines", [tuple(P.ENGINES), (P.LLAMACPP,)])
def test_the_sift_gives_what_every_text_tested_on_the_line_gives(engines):
    sifter = sift.Sifter(engines)
    lines = corpus()
    # each line with its digits moved (a shape met before with other numbers, which the sift takes from its memo)
    varied = [line.translate(str.maketrans("0123456789", "1234567890")) for line in lines]
    assert len(lines) > 5_000
    for line in lines + varied + lines:
        assert sifted(sifter, line) == every_text_tested(line, engines), line


@pytest.mark.parametrize("first, then", [
    # a keyword with a digit: its shape is another text's too; the gate asks the line itself
    ("INFO [mxfp4.py:165] Using Triton backend", "INFO [mxfp8.py:165] Using Triton backend"),
    ("INFO [mxfp8.py:165] Using Triton backend", "INFO [mxfp4.py:165] Using Triton backend"),
    # a required text with a digit: the shape holds it for any digits, the line only for its own
    ("[2026-05-13 02:15:18 DP0 TP0] DSv4 memory calculation: bytes_per_full_token=1, available_bytes=8 GB, ",
     "[2026-05-13 02:15:18 DP0 TP0] DSv7 memory calculation: bytes_per_full_token=1, available_bytes=8 GB, "),
    ("build_info: b1-e365e65", "build_info: b2-e365e65"),
])
def test_a_text_with_a_digit_is_tested_on_the_line_not_on_the_shape_it_shares(first, then):
    sifter = sift.Sifter(P.ENGINES)
    for line in (first, then, first):
        assert sifted(sifter, line) == every_text_tested(line, P.ENGINES)
    assert len(sifter.sifted) == 1  # one shape, sifted once
    assert every_text_tested(first, P.ENGINES) != every_text_tested(then, P.ENGINES)


def test_lines_that_differ_in_their_numbers_are_sifted_once(monkeypatch):
    sifter = sift.Sifter(P.ENGINES)
    calls = []
    real = sifter._sift
    monkeypatch.setattr(sifter, "_sift", lambda text: calls.append(text) or real(text))
    for n in range(1000):
        sifter.candidates(ACCESS.replace("52814", str(40000 + n)))
        sifter.candidates(STATS.replace("3.1%", f"{n % 10}.{n % 7}%"))
    assert calls == [sift.shape(ACCESS), sift.shape(STATS)]
    assert sifter.candidates(ACCESS) == ()
    assert {p.id for p in sifter.candidates(STATS)} == every_text_tested(STATS, P.ENGINES) != set()


def test_the_shapes_kept_are_bounded_and_the_rest_are_sifted_each_time():
    sifter = sift.Sifter(P.ENGINES, max_bytes=1000)
    lines = [f"INFO line {'x' * n} KV cache usage: 1%" for n in range(100)]
    for line in lines:
        assert sifted(sifter, line) == every_text_tested(line, P.ENGINES) != set()
    assert sifter.kept_bytes == sum(len(key) for key in sifter.sifted) <= 1000
    assert len(sifter.sifted) == 24  # lines of 29 + n bytes: n = 0..23 fill 972 of 1000 bytes, the next one does not fit


def test_a_line_that_is_no_utf8_text_is_sifted_as_any_other():
    line = "KV cache usage \ud800 Model loading took 1.5 GiB"  # a lone surrogate, as a JSON record can carry
    assert sifted(sift.Sifter(P.ENGINES), line) == every_text_tested(line, P.ENGINES) != set()


def test_a_parser_reads_the_same_figures_from_a_log_of_repeated_shapes():
    lines = [ACCESS + "\n"] * 500 + ["(EngineCore_0 pid=1) INFO [gpu_model_runner.py:1] Model loading took 1.5 GiB\n"]
    log, _ = parse_log(lines, "vllm")
    assert log.terms() == {P.WEIGHTS: 1.5 * 1024**3}
    parser = LogParser("vllm")
    for line in lines:
        parser.feed(line)
    assert len(parser.sifter.sifted) == 2
