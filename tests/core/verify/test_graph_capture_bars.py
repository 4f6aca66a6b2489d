"""vLLM's CUDA-graph capture bars counted (patterns vllm-graph-capture-bar): the graphs a start-up captured, held
against the estimate's count (extra.cuda_graph_counts), the check that would have caught a model's own capture
hook (profiles.VLLM_MODEL_CAPTURE)."""

from __future__ import annotations

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm
from gpustack_guard.core.units import MiB
from gpustack_guard.core.verify import compare as C
from gpustack_guard.core.verify import patterns as P
from gpustack_guard.core.verify.logparse import MAX_GRAPH_BARS, parse_log

BAR = "\u2588" * 10
V1 = ["INFO 11-24 11:43:20 [api_server.py:1839] vLLM API server version 0.11.0",
      f"Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  45%|{BAR[:4]}      | 23/51 [00:00<00:01, 30.1it/s]"
      f"\rCapturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|{BAR}| 51/51 [00:01<00:00, 33.44it/s]",
      f"Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|{BAR}| 51/51 [00:01<00:00, 33.44it/s]",
      f"Capturing CUDA graphs (decode, FULL): 100%|{BAR}| 35/35 [00:01<00:00, 33.86it/s]"]


def captured(lines: list[str]) -> int | None:
    log, _ = parse_log([line + "\n" for line in lines], P.VLLM)
    return log.terms().get(P.GRAPHS_CAPTURED)


def test_the_v1_runners_two_bars_add_up_and_a_redraw_counts_once():
    assert captured(V1) == 51 + 35


def test_the_v2_runner_prints_one_bar_per_mode():
    # v1/worker/gpu/cudagraph_utils.py@v0.34.0: f"{progress_bar_desc} ({mode.name})"
    assert captured([f"Capturing CUDA graphs (PIECEWISE): 100%|{BAR}| 83/83 [00:04<00:00, 19.2it/s]",
                     "Capturing CUDA graphs (FULL): 100%|| 64/64 [00:02<00:00, 30.0it/s]"]) == 83 + 64


def test_v0s_shapes_bar():
    assert captured([f"Capturing CUDA graph shapes: 100%|{BAR}| 35/35 [00:10<00:00,  3.31it/s]"]) == 35


def test_an_unfinished_bar_is_not_a_count():
    # a start-up that died while capturing: what it did capture is not the release's plan
    assert captured([f"Capturing CUDA graphs (decode, FULL):  45%|{BAR[:4]}| 30/67 [00:01<00:01, 20.0it/s]"]) is None
    assert captured(["Capturing CUDA graphs (decode, FULL): 100%|| 30/67"]) is None


def test_a_new_start_up_drops_the_earlier_bars():
    again = V1[:1] + [f"Capturing CUDA graphs (decode, FULL): 100%|{BAR}| 7/7"]
    assert captured(V1 + again) == 7


def test_labels_kept_are_bounded():
    lines = [f"Capturing CUDA graphs (label {chr(65 + i)}, FULL): 100%|| 1/1" for i in range(3 * MAX_GRAPH_BARS)]
    assert captured(lines) == MAX_GRAPH_BARS


def test_verify_holds_the_count_against_the_estimate():
    est = estimate_vllm(catalog_facts("openai/gpt-oss-20b"), 81_559 * MiB,
                        VllmConfig(gpu_memory_utilization=0.9, max_model_len=8192), version="0.11.2",
                        gpu_name="NVIDIA H100 80GB HBM3")
    estimated = C.estimated_terms(est)
    assert estimated[P.GRAPHS_CAPTURED] == 83 + 83  # gpt-oss's hook: sizes to 1024 tokens
    observed = {P.GRAPHS_CAPTURED: 51 + 51}
    row = next(d for d in C.deltas(observed, estimated) if d.term == P.GRAPHS_CAPTURED)
    assert (row.difference, row.percent) == (64, 62.7)


def test_the_count_is_shown_only_when_the_log_printed_bars():
    assert [d.term for d in C.deltas({}, {P.GRAPHS_CAPTURED: 35, P.KV_TOKENS: 10})] == [P.KV_TOKENS]
