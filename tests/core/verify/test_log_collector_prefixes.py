"""A log read through a collector keeps every figure: the prefixes `kubectl logs --timestamps`, `docker logs -t`,
`docker compose logs`, journald and ANSI colours put before each engine line change nothing the parser reads."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import parse_log

LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "logs"
PREFIXES = {
    "kubectl --timestamps": "2025-10-31T15:07:49.123456789Z ",
    "docker logs -t with an offset": "2025-10-31T15:07:49.123456+00:00 ",
    "docker compose": "vllm-server-1  | ",
    "journald": "Oct 31 15:07:49 gpu-node-3 bash[12345]: ",
    "stern": "sglang-7d9f8c-x2abc sglang ",
}
# every engine's lines, SGLang's without a timestamp of their own among them (a look-behind keeps MiniMax's labelled
# pools out, not a collector's words)
FIXTURES = sorted(str(p.relative_to(LOGS)) for p in LOGS.rglob("*.log"))  # every public log kept


def observed(lines: list[str]) -> dict:
    log, _ = parse_log(lines)
    return {**dataclasses.asdict(log), "terms": log.terms()}


@pytest.mark.parametrize("name", FIXTURES)
@pytest.mark.parametrize("how", PREFIXES)
def test_a_collectors_prefix_changes_nothing_read(name, how):
    lines = (LOGS / name).read_text(encoding="utf-8").splitlines(True)
    plain = observed(lines)
    if not (plain["terms"] or plain["ranks"] or plain["failure"] or plain["started"]):
        pytest.skip("nothing read to lose")
    assert observed([PREFIXES[how] + line if not line.startswith("##") else line for line in lines]) == plain


def test_sglang_kv_tokens_are_read_under_kubectl_timestamps():
    line = "KV Cache is allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB\n"
    plain = observed([line])
    assert observed(["2025-10-31T15:07:49.5Z " + line]) == plain
    assert plain["terms"][P.KV_TOKENS] == 367404
    # a label before the line is a labelled pool (memory_pool.py@v0.5.23 allocation_label), not the KV cache
    assert P.KV_TOKENS not in observed(["MiniMax MSA-v1 main NVFP4 " + line])["terms"]


def test_only_an_iso_timestamp_with_a_t_is_taken_off():
    # SGLang's own `[date time]` and a date with a space stay part of the line
    line = "[2025-11-30 12:50:10] KV Cache is allocated. #tokens: 2243474, K size: 59.91 GB, V size: 59.91 GB\n"
    assert observed(["2025-11-30 12:50:10 " + line]) == observed([line])
    # a prefix that is no timestamp gsg strips is still no label: the line is read through it
    assert observed(["2025-11-30 " + line.split("] ", 1)[1]])["terms"].get(P.KV_TOKENS) == 2243474


@pytest.mark.parametrize("how", [
    lambda line: line.replace("    vLLM STDOUT: ", "", 1),  # the bare engine line
    lambda line: line.replace("    vLLM STDOUT: ", "vLLM STDOUT: ", 1),  # not indented
    lambda line: line.replace("vLLM STDOUT: ", "vLLM STDOUT: (RayWorkerWrapper pid=8776) ", 1),  # a Ray worker's line
    lambda line: line.replace("vLLM STDOUT: INFO", "vLLM STDOUT: \x1b[32mINFO\x1b[0m", 1),  # ANSI colours
])
def test_unsloths_vllm_stdout_echo_changes_nothing_read(how):
    # Unsloth's SyntheticDataKit echoes `vllm serve` as "vLLM STDOUT: <line>", a notebook export indents it
    lines = (LOGS / "vllm" / "v0.8.2-llama32-3b-t4-fp16-2k-vllm-stdout.log").read_text(encoding="utf-8").splitlines(True)
    plain = observed(lines)
    assert plain["terms"][P.KV_TOKENS] == 3637 * 16 and plain["engine_version"] == "0.8.2"
    assert observed([how(line) if not line.startswith("##") else line for line in lines])["terms"] == plain["terms"]


@pytest.mark.parametrize("how", PREFIXES)
def test_llama_servers_json_record_is_read_under_a_collectors_prefix(how):
    # llama.cpp PR #4620's b1702 server logs JSON records: under `kubectl logs --timestamps` (or any collector's
    # prefix) the record was not unwrapped, and its build went unread
    line = ('{"timestamp":1703493143,"level":"INFO","function":"main","line":2711,"message":"build info",'
            '"build":1702,"commit":"6f35a4a"}\n')
    assert parse_log([line])[0].engine_version == "1702"
    assert parse_log([PREFIXES[how] + line])[0].engine_version == "1702"


def test_a_brace_in_an_engines_own_line_is_not_a_record():
    # vLLM's argument dump ends with a brace: it is read as printed, not as a record (no llama-server head in it)
    line = "2025-10-31T15:07:49Z INFO 10-31 15:07:49 [api_server.py:1] non-default args: {'model': 'org/m'}\n"
    assert parse_log([line])[0].model == "org/m"
    # a JSON object after a prefix without llama-server's head (no numeric "line") is left as it is
    shipped = '2025-10-31T15:07:49Z {"level":"INFO","function":"main","message":"build info","build":1702}\n'
    assert parse_log([shipped], "llama.cpp")[0].engine_version is None
