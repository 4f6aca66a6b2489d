"""vLLM's CUDA-graph capture plan as a log prints it (capture bars, the profiler's plan line, gpt-oss's override)
held against the estimate's plan (extra.cuda_graph_counts, extra.cuda_graph_largest): the check that would have
caught a model's own capture hook (profiles.VLLM_MODEL_CAPTURE) from one public log."""

from __future__ import annotations

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm
from gpustack_guard.core.units import MiB
from gpustack_guard.core.verify import compare as C
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import parse_log

BAR = "\u2588" * 10


def observed(lines: list[str]) -> dict:
    log, _ = parse_log([line + "\n" for line in lines], P.VLLM)
    return log.terms()


def gpt_oss(version: str, **settings) -> dict:
    est = estimate_vllm(catalog_facts("openai/gpt-oss-20b"), 81_559 * MiB,
                        VllmConfig(gpu_memory_utilization=0.9, max_model_len=8192, **settings), version=version,
                        gpu_name="NVIDIA H100 80GB HBM3")
    return C.estimated_terms(est)


def test_a_redraw_of_the_bar_keeps_the_plans_count():
    got = observed([f"Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  45%|{BAR[:4]}| 23/51 [00:00<00:01]"
                    f"\rCapturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|{BAR}| 51/51 [00:01<00:00]",
                    f"Capturing CUDA graphs (decode, FULL): 100%|{BAR}| 35/35 [00:01<00:00, 33.86it/s]"])
    assert (got[P.GRAPHS_PIECEWISE], got[P.GRAPHS_FULL]) == (51, 35)


def test_cudagraph_mode_full_captures_mixed_batches_as_full_graphs():
    got = observed([f"Capturing CUDA graphs (mixed prefill-decode, FULL): 100%|{BAR}| 51/51 [00:02<00:00]"])
    assert got[P.GRAPHS_FULL] == 51 and P.GRAPHS_PIECEWISE not in got
    est = C.estimated_terms(estimate_vllm(catalog_facts("Qwen/Qwen3-8B"), 81_559 * MiB,
                                          VllmConfig(max_model_len=8192, max_num_seqs=256, cudagraph_mode="FULL"),
                                          version="0.11.2", gpu_name="NVIDIA H100 80GB HBM3"))
    assert (est[P.GRAPHS_PIECEWISE], est[P.GRAPHS_FULL]) == (0, 51)


def test_verify_holds_the_plan_against_the_estimate():
    # a log of gpt-oss-20b on an H100 at 0.24 (vllm#46933's lines): 83 + 83 graphs to 1,024 tokens
    got = observed(["INFO 06-27 19:49:10 [config.py:236] Overriding max cuda graph capture size to 1024 for "
                    "performance.",
                    "INFO 06-27 19:49:53 [gpu_model_runner.py:6483] Profiling CUDA graph memory: PIECEWISE=83 "
                    "(largest=1024), FULL=83 (largest=1024)"])
    rows = {d.term: d for d in C.deltas(got, gpt_oss("0.24.0"))}
    assert [(rows[t].observed, rows[t].estimated) for t in (P.GRAPHS_PIECEWISE, P.GRAPHS_FULL, P.MAX_CAPTURE_SIZE)] \
        == [(83, 83), (83, 83), (1024, 1024)]
    # without the hook's sizes (a capture size set) the same log is 32 graphs and 512 tokens apart
    rows = {d.term: d for d in C.deltas(got, gpt_oss("0.24.0", max_cudagraph_capture_size=512))}
    assert (rows[P.GRAPHS_PIECEWISE].difference, rows[P.MAX_CAPTURE_SIZE].difference) == (-32, -512)


def test_the_plan_is_shown_only_when_the_log_printed_it():
    estimated = gpt_oss("0.11.2")
    assert not {P.GRAPHS_PIECEWISE, P.GRAPHS_FULL, P.MAX_CAPTURE_SIZE} & {d.term for d in C.deltas({}, estimated)}
