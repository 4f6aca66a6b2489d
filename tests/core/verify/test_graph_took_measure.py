"""What vLLM's "Graph capturing finished ... took X GiB" measures, by release (profiles.VLLM_GRAPH_TOOK_MEASURE):
from 0.10.1 to 0.17.x capture_model reads the free memory before the first capture empties torch's cache, so X is
the graphs' memory less that cache (a lower bound); from 0.18.0 it empties the cache first (benchmarks/vectors/
MISSES.md, "CUDA-graph memory")."""

from pathlib import Path

import pytest

from gpustack_guard.core.memory import profiles as MP
from gpustack_guard.core.verify import compare as C
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import parse_log

LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "vllm"
TOOK = "INFO 10-14 09:12:33 [gpu_model_runner.py:3480] Graph capturing finished in 3 secs, took -0.22 GiB"
POOL = ("INFO 06-25 17:22:03 [gpu_worker.py:597] CUDA graph pool memory: 2.44 GiB (actual), 2.35 GiB (estimated), "
        "difference: 0.09 GiB (3.6%).")
V0_PROFILE = "INFO 02-11 10:17:54 [executor_base.py:113] # cuda blocks: 36184, # CPU blocks: 2340"


def notes(lines, version):
    log, _ = parse_log([line + "\n" for line in lines], P.VLLM)
    return C.graph_took_notes(log, version)


@pytest.mark.parametrize("version, measure", [
    ("0.10.0", None), ("0.10.1", "net_of_cache"), ("0.11.0", "net_of_cache"), ("0.16.0", "net_of_cache"),
    ("0.17.0", "net_of_cache"), ("0.18.0", "cache_emptied"), ("0.26.0", "cache_emptied"), ("0.34.0", "cache_emptied"),
])
def test_the_measure_is_keyed_by_release(version, measure):
    assert MP.row_for("vllm", MP.VLLM_GRAPH_TOOK_MEASURE, version) == measure


@pytest.mark.parametrize("version, noted", [
    ("0.11.0", True), ("0.17.0", True), ("0.10.0", False), ("0.18.0", False), ("0.19.1", False),
])
def test_a_took_line_of_a_release_that_measures_net_of_the_cache_is_a_note(version, noted):
    got = notes([TOOK], version)
    assert len(got) == int(noted)
    if noted:
        assert got[0].startswith(f"vLLM {version} measures the graphs' memory before the first capture empties")
        assert "a lower bound" in got[0]


def test_no_note_without_the_took_line_with_the_pool_line_or_on_v0():
    assert notes(["INFO 10-14 09:12:33 [gpu_model_runner.py:3480] Model loading took 1.2 GiB"], "0.11.0") == []
    assert notes([TOOK, POOL], "0.17.0") == []  # a line that reports the clean pool beside it
    assert notes([V0_PROFILE, TOOK], "0.10.1") == []  # V0's capture was not read


@pytest.mark.parametrize("name, version, noted", [
    ("v1-0.16-llama3-70b-awq-2xl40s-tp2.log", "0.16.0", True),  # 1.22 GiB logged, 51 + 35 graphs
    ("v1-0.13-gemma3-1b-llm-class-gmu095-2k.log", "0.13.0", True),  # -0.22 GiB: the cache was larger
    ("v1-0.19.1-qwen3-8b-a100-40gb-defaults.log", "0.19.1", False),  # emptied first: 2.44 GiB is the graphs'
    ("v1-0.10.2-qwen3-235b-fp8-8xl40s-tp8-ep.log", "0.10.2", True),  # the 0.10.2 advice line quotes the same drop
])
def test_public_logs(name, version, noted):
    log, _ = parse_log((LOGS / name).read_text().splitlines(keepends=True), P.VLLM)
    assert log.terms().get(P.CUDA_GRAPHS) is not None
    assert len(C.graph_took_notes(log, version)) == int(noted)


def test_verify_reports_the_note_on_a_net_release_only(gsg):
    """The CLI's report carries the note for the 0.16.0 L40S log and not for the 0.19.1 A100 one."""
    import json

    def report(name, model, *args):
        result = gsg("verify", "--log", str(LOGS / name), "-m", model, "-o", "json", *args)
        assert result.code in (0, 1), result.err
        return json.loads(result.out)

    net = report("v1-0.16-llama3-70b-awq-2xl40s-tp2.log", "TechxGenus/Meta-Llama-3-70B-Instruct-AWQ",
                 "--gpu-name", "NVIDIA L40S", "--gpu-memory", "46068MiB", "--backend-version", "0.16.0")
    clean = report("v1-0.19.1-qwen3-8b-a100-40gb-defaults.log", "Qwen/Qwen3-8B", "--gpu-name",
                   "NVIDIA A100-SXM4-40GB", "--gpu-memory", "40960MiB", "--backend-version", "0.19.1")
    marker = "measures the graphs' memory before the first capture empties torch's cache"
    assert [n for n in net["notes"] if marker in n] and net["observed"]["cuda_graphs_bytes_per_gpu"] > 0
    assert not [n for n in clean["notes"] if marker in n]
