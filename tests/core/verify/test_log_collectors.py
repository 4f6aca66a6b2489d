"""Collector formats read whole: containerd's partial (P) records joined into the engine's line, and a
`gcloud logging read --format=json` dump unwrapped to its entries' lines, oldest first; every fixture through both
is in test_log_transports.py (SAME)."""

from __future__ import annotations

import json
from pathlib import Path

from gpustack_guard.core.verify import log_records as R
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import parse_log

LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "logs"
STAMP = "2025-10-31T15:07:49.123456789Z"
BLOCKS = "INFO 01-11 15:51:18 llm_engine.py:275] # GPU blocks: 229, # CPU blocks: 512"


def test_partial_records_join_per_stream_and_a_number_cut_between_them_is_read_whole():
    joiner = R.CriJoiner()
    fed = [f"{STAMP} stderr P INFO 01-11 15:51:18 llm_engine.py:275] # GPU blocks: 2",
           f"{STAMP} stdout F an stdout line between",
           f"{STAMP} stderr P 2",
           f"{STAMP} stderr F 9, # CPU blocks: 512",
           "a line of no collector"]
    assert [joiner.feed(line) for line in fed] == [None, "an stdout line between", None, BLOCKS,
                                                   "a line of no collector"]
    log, _ = parse_log([line + "\n" for line in fed], "vllm")
    assert log.terms()[P.GPU_BLOCKS] == 229 and log.lines == 5
    # read as separate lines, the first piece gives 2 blocks
    assert parse_log([f"{STAMP} stderr F INFO 01-11 15:51:18 llm_engine.py:275] # GPU blocks: 2\n"], "vllm")[0] \
        .terms()[P.GPU_BLOCKS] == 2


def test_a_tag_with_more_after_a_colon_and_an_empty_record():
    joiner = R.CriJoiner()
    assert joiner.feed(f"{STAMP} stdout P:x first ") is None
    assert joiner.feed(f"{STAMP} stdout F:x second") == "first second"
    assert joiner.feed(f"{STAMP} stdout F") == ""
    assert joiner.feed("2025-10-31 stdout F not a CRI time") == "2025-10-31 stdout F not a CRI time"


def test_a_log_cut_inside_a_long_line_reads_the_pieces_it_has():
    log, _ = parse_log([f"{STAMP} stderr P {BLOCKS[:60]}\n", f"{STAMP} stderr P {BLOCKS[60:]}\n"], "vllm")
    assert log.terms()[P.GPU_BLOCKS] == 229 and log.terms()[P.CPU_BLOCKS] == 512


def test_a_joined_line_stops_at_its_limit_and_says_so(monkeypatch):
    monkeypatch.setattr(R, "CRI_MAX_JOINED_CHARS", 100)
    monkeypatch.setattr("gpustack_guard.core.verify.logparse.CRI_MAX_JOINED_CHARS", 100)
    lines = [f"{STAMP} stderr P {'x' * 60}\n", f"{STAMP} stderr P {'y' * 60}\n", f"{STAMP} stderr F {BLOCKS}\n"]
    joiner = R.CriJoiner()
    assert [joiner.feed(line[:-1]) for line in lines] == [None, None, "x" * 60 + "y" * 40]
    log, _ = parse_log(lines + [f"{STAMP} stdout F {BLOCKS}\n"], "vllm")
    assert log.terms()[P.GPU_BLOCKS] == 229  # the next line of its own is read
    assert "a line joined from containerd's partial records was cut at 100 characters (CRI_MAX_JOINED_CHARS)" \
        in log.notes


def _entries(texts: list[str], newest_first: bool) -> list[dict]:
    entries = [{"textPayload": text, "timestamp": f"2025-10-31T15:07:{n:02d}Z"} for n, text in enumerate(texts)]
    return entries[::-1] if newest_first else entries


def test_a_gcloud_dump_is_read_oldest_first_either_order():
    texts = ["one", "two", "three"]
    for newest_first in (True, False):
        dump = json.dumps(_entries(texts, newest_first), indent=2) + "\n"
        assert list(R.unwrap_entry_array(dump.splitlines(True))) == ["one\n", "two\n", "three\n"]
    same_time = [{"jsonPayload": {"message": text}, "timestamp": "2025-10-31T15:07:49Z"} for text in texts]
    assert list(R.unwrap_entry_array(json.dumps(same_time[::-1], indent=2).splitlines(True))) == [
        "three\n", "two\n", "one\n"]  # one timestamp: the array's own order


def test_what_is_not_a_gcloud_dump_is_read_as_it_is():
    cases = [["[2025-10-31 15:07:49] SGLang line\n", "next\n"],  # SGLang's own bracket
             ["[\n", "  1,\n", "  2\n", "]\n"],  # an array of no entries
             ["[\n", '  {"textPayload": "cut\n'],  # a dump cut short: not JSON
             ["\n", "plain\n"]]
    for lines in cases:
        assert list(R.unwrap_entry_array(lines)) == lines
    assert list(R.unwrap_entry_array([])) == []
    assert list(R.unwrap_entry_array(["[]\n"])) == []


def test_a_real_fixture_both_ways_reads_what_the_plain_log_does():
    name = "vllm/v0.6.4-llama31-8b-rtx3090-20k.log"
    plain = (LOGS / name).read_text(encoding="utf-8").splitlines(True)
    want = parse_log(plain)[0].terms()
    cri = [f"{STAMP} stdout {tag} {piece}\n" for line in plain
           for tag, piece in ([("P", line[:-1][:7]), ("F", line[:-1][7:])] if len(line) > 8 else [("F", line[:-1])])]
    dump = json.dumps([{"textPayload": line[:-1], "timestamp": f"2025-10-31T15:07:49.{n:06d}Z"}
                       for n, line in enumerate(plain)][::-1], indent=2).splitlines(True)
    assert want[P.KV_TOKENS] == 31_232
    assert parse_log(cri)[0].terms() == want
    assert parse_log(dump)[0].terms() == want
