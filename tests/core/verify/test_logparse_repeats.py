"""A log that repeats or varies its long lines by the thousand: argument and config dumps are read once per text
and at most MAX_ARGUMENT_DUMPS different ones; a long line seen before is not searched again; every pattern is
tried only on lines that hold its required text. (A fuzzed log of 5,000 copies of vLLM's engine-config line took
3 s; 31 MiB of them, under the 32 MiB read cap, 100 s, where issue 33 bounds a hostile log at 20 s.)"""

from __future__ import annotations

import re

import pytest

from gpustack_guard.core.verify import logparse as LP
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import MAX_ARGUMENT_DUMPS, parse_log
from gpustack_guard.core.verify.patterns import alternative_literals, required_literal

CONFIG = ("(EngineCore_0 pid=1159) INFO 09-10 23:26:51 [core.py:74] Initializing a V1 LLM engine (v0.10.1.1) with "
          "config: model='gpt-oss-120b', speculative_config=None, tokenizer='gpt-oss-120b', skip_tokenizer_init=False, "
          "tokenizer_mode=auto, revision=None, dtype=torch.bfloat16, max_seq_len={length}, "
          "download_dir=None, load_format=auto, tensor_parallel_size=4, pipeline_parallel_size=1, "
          "enforce_eager=False, kv_cache_dtype=auto, seed=0\n")
KV = "(EngineCore_0 pid=1159) INFO 09-10 23:48:39 [kv_cache_utils.py:1013] GPU KV cache size: 2,640,144 tokens\n"


def counting(monkeypatch) -> list[str]:
    read: list[str] = []
    real = LP.parse_printed_args

    def spy(text: str):
        read.append(text)
        return real(text)

    monkeypatch.setattr(LP, "parse_printed_args", spy)
    return read


def test_the_same_config_line_five_thousand_times_is_read_once(monkeypatch):
    read = counting(monkeypatch)
    log, _ = parse_log([CONFIG.format(length=16384)] * 5000 + [KV])
    assert len(read) == 1
    assert (log.config["max_seq_len"], log.config["tensor_parallel_size"]) == (16384, 4)
    assert log.engine_version == "0.10.1.1" and log.terms()[P.KV_TOKENS] == 2640144
    assert not any("MAX_ARGUMENT_DUMPS" in note for note in log.notes)


def test_past_the_cap_of_different_dumps_the_last_read_stands_and_a_note_says_how_many_were_not(monkeypatch):
    read = counting(monkeypatch)
    lines = [CONFIG.format(length=1000 + i) for i in range(MAX_ARGUMENT_DUMPS + 36)] + [KV]
    log, _ = parse_log(lines)
    assert len(read) == MAX_ARGUMENT_DUMPS == 64
    assert log.config["max_seq_len"] == 1000 + MAX_ARGUMENT_DUMPS - 1
    assert "36 argument or config line(s) past 64 different ones were not read (MAX_ARGUMENT_DUMPS)" in log.notes


def test_a_dump_seen_again_after_the_cap_is_still_read_from_memory(monkeypatch):
    # a restart printing its first config again after many others: the same text costs nothing and still counts
    lines = [CONFIG.format(length=1000 + i) for i in range(MAX_ARGUMENT_DUMPS + 5)] + [CONFIG.format(length=1000)]
    log, _ = parse_log(lines)
    assert log.config["max_seq_len"] == 1000
    assert "5 argument or config line(s) past 64 different ones were not read (MAX_ARGUMENT_DUMPS)" in log.notes


def test_secrets_in_a_repeated_dump_are_collected_once_and_masked_every_time():
    line = CONFIG.format(length=8192).replace("revision=None", "revision='hf_abcdefghijklmnopqrstuvwxyz0123456789'")
    log, secrets = parse_log([line] * 3)
    assert secrets == ["hf_abcdefghijklmnopqrstuvwxyz0123456789"]
    assert "hf_abcdefghijklmnopqrstuvwxyz" not in repr(log.config)


def test_a_long_line_seen_before_is_not_searched_again(monkeypatch):
    searched: list[tuple[str, str]] = []

    class Counting:
        def __init__(self, regex):
            self.regex = regex
            self.flags, self.pattern = regex.flags, regex.pattern

        def search(self, line):
            searched.append((self.pattern, line))
            return self.regex.search(line)

    monkeypatch.setattr(P, "ALL_PATTERNS", tuple(
        P.Pattern(p.id, p.engine, p.releases, Counting(p.regex), p.example, p.source, p.terms, p.scope, p.kind)
        for p in P.ALL_PATTERNS))
    line = CONFIG.format(length=16384).rstrip("\n")
    parse_log([line] * 50)
    # once per pattern that holds its required text, on the first copy only
    holding = sorted(p.regex.pattern for p in P.ALL_PATTERNS
                     if p.needle in line and (len(p.needles) < 2 or any(text in line for text in p.needles)))
    assert sorted(pattern for pattern, _ in searched) == holding
    assert {seen for _, seen in searched} == {line}
    by_id = {p.id: p.regex.pattern for p in P.ALL_PATTERNS}
    assert by_id["vllm-engine-version"] in holding and by_id["sglang-kv-allocated"] not in holding


@pytest.mark.parametrize("regex, needle", [
    (r"GPU KV cache size: (?P<tokens>[0-9,]+) tokens", "GPU KV cache size: "),
    (r"took (?P<gib>[0-9.]+) GiB and", " GiB and"),  # the longer of the two runs
    (r"(?:a|b)c", "c"),
    (r"abc|def", ""),  # a top-level alternative: neither text is required
    (r"x?yz", "yz"),  # an optional character is no part of the run
])
def test_required_literal_is_text_every_match_contains(regex, needle):
    assert required_literal(re.compile(regex)) == needle
    assert required_literal(re.compile(regex, re.IGNORECASE)) == ""


def test_every_patterns_required_text_is_in_the_line_it_was_written_from():
    needles = {p.id: required_literal(p.regex) for p in P.ALL_PATTERNS}
    assert all(needles[p.id] in p.example for p in P.ALL_PATTERNS)
    # the rows with no required text (a top-level alternative): every other row is skipped on lines without its own
    assert sorted(pid for pid, needle in needles.items() if not needle) == [
        "llamacpp-alloc-failed", "llamacpp-listening", "llamacpp-pipeline-copies", "llamacpp-server-slots",
        "python-device-error",
        "python-signal", "python-worker-died", "sglang-not-enough-memory", "vllm-no-kv-memory",
        "vllm-serving"]


@pytest.mark.parametrize("regex, texts", [
    (r"abc|def", ("abc", "def")),
    (r"(?:pipe (?:n=|x)|sched copies = )(?P<n>[0-9]+)", ("pipe ", "sched copies = ")),  # a group taken once
    (r"\bCUDA error: |[Hh]IP error|no kernel", ("CUDA error: ", "IP error", "no kernel")),
    (r"abc|[0-9]+", ()),  # a branch without text: nothing is required
    (r"(?:abc|def)?x", ()),  # an optional group is not required
    (r"(?:abc|def)*", ()),
    (r"(?i:abc|def)x", ()),  # case ignored inside the group
    (r"abd|abe", ()),  # the parser takes the shared "ab" out of the branches: required_literal has it
])
def test_alternative_literals_one_of_which_every_match_contains(regex, texts):
    assert alternative_literals(re.compile(regex)) == texts
    assert alternative_literals(re.compile(regex, re.IGNORECASE)) == ()


def test_every_pattern_without_one_required_text_has_one_of_several():
    """The top-level alternatives are searched only on lines holding one of their branches' texts; the line each
    was written from holds one."""
    for p in P.ALL_PATTERNS:
        assert p.needles, p.id
        assert any(text in p.example for text in p.needles), p.id
    assert all(p.needles == (p.needle,) for p in P.ALL_PATTERNS if p.needle)


def _extra_pattern(pattern_id: str, regex: str) -> P.Pattern:
    return P.Pattern(pattern_id, P.VLLM, "test", re.compile(regex), "", "test", {"tokens": (P.KV_TOKENS, "int")},
                     P.ENGINE)


@pytest.mark.parametrize("regex, needle", [
    (r"XPU KV cache size: (?P<tokens>[0-9,]+) tokens", "XPU KV cache size: "),
    # no text every match holds (a top-level alternative, case ignored): the line is searched all the same
    (r"(?:XPU|NPU) KV cache size: (?P<tokens>[0-9,]+) tokens|never", ""),
    (r"(?i)xpu kv cache size: (?P<tokens>[0-9,]+) tokens", ""),
])
def test_a_pattern_added_after_the_first_parser_is_searched_by_its_own_required_text(monkeypatch, regex, needle):
    parse_log([KV])  # the patterns' required texts are known from here on
    added = _extra_pattern("test-xpu-kv-tokens", regex)
    assert added.needle == needle
    monkeypatch.setattr(P, "ALL_PATTERNS", (added,))
    log, _ = parse_log(["(EngineCore_0 pid=1) INFO [kv_cache_utils.py:1013] XPU KV cache size: 1,234 tokens\n"])
    assert log.engine_terms == {P.KV_TOKENS: 1234} and log.matched == {"test-xpu-kv-tokens": 1}


def test_a_pattern_replaced_under_its_id_is_searched_by_its_new_required_text(monkeypatch):
    # the required text belongs to the pattern, not to its id: a row rewritten under the same id is not skipped
    parse_log([KV])
    monkeypatch.setattr(P, "ALL_PATTERNS", (_extra_pattern("vllm-v1-kv-tokens", r"KV cache holds (?P<tokens>\d+)"),))
    log, _ = parse_log(["INFO KV cache holds 4096\n"])
    assert log.engine_terms == {P.KV_TOKENS: 4096}
