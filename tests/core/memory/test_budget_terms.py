"""The budget term by term (core/memory/terms.py): every term each engine reports has a source row
(profiles.TERM_SOURCES) for every release range, and a release where the arithmetic of a term changes starts a
row of its own, so `gsg estimate --output json` never cites an older release's file for a newer rule."""

import re

import pytest

from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory import terms as T
from gpustack_guard.core.memory.profiles import known_version

ZERO = {"vllm": "0.0.0", "sglang": "0.0.0", "llamacpp": "b0"}


def _changes(rows, *fields):
    """The `since` of every row whose fields differ from the row before it (the first row excluded)."""
    found, before = set(), None
    for row in rows:
        now = tuple(getattr(row, f) for f in fields)
        if before is not None and now != before:
            found.add(row.since)
        before = now
    return found


# where gsg's vLLM arithmetic of a term changes, read from the tables that drive it
VLLM_CHANGES = {
    T.SAMPLER_PEAK: _changes(P.VLLM_SAMPLER_ROWS, "kernel", "profiled") | {"0.8.0"}  # V1's dummy sampler
    | {str(since) for since, _ in P.VLLM_V0_PROFILE_SAMPLERS[1:]}  # V0's sort of fp32 logits
    | {str(since) for since, _ in P.VLLM_V0_PROFILE_MEASURES[1:]},  # V0's reserved (0.2.5) then allocated (0.6.4)
    T.SAMPLER_WARMUP: _changes(P.VLLM_SAMPLER_ROWS, "warmup_rows") | {"0.8.0"}
    | _changes(P.VLLM_PROFILES, "extensible_kv"),
    T.CUDA_GRAPHS: _changes(P.VLLM_PROFILES, "graphs_profiled", "graph_sets", "capture_rule"),
    T.KV_CACHE: _changes(P.VLLM_PROFILES, "extensible_kv"),
    T.FORWARD_PEAK: {str(since) for since, _ in P.VLLM_FUSED_MOE_CHUNKS[1:]} | {"0.8.0", P.VLLM_MOE_WORKSPACE_SINCE},
    T.NON_TORCH: {row.since for row in P.VLLM_NON_TORCH if row.since != "0.0.0"}
    | _changes(P.VLLM_PROFILES, "context_in_budget"),
    T.ENCODER_PEAK: {"0.8.0"},
}


@pytest.mark.parametrize("engine", list(T.ENGINE_TERMS))
def test_every_term_of_every_engine_has_a_source_from_its_oldest_release(engine):
    family = T.FAMILY[engine]
    table = P.TERM_SOURCES[family]
    assert set(table) >= set(T.ENGINE_TERMS[engine])
    for term in T.ENGINE_TERMS[engine]:
        rows = table[term]
        assert rows[0].since == ZERO[family], term
        versions = [known_version(row.since) for row in rows]
        assert versions == sorted(versions) and len(set(versions)) == len(versions), term  # one row per range
        for row in rows:
            assert row.rule and re.search(r"[\w.-]+/[\w/.-]+\.(py|cpp|go)\b", row.source), (term, row)  # a file read


@pytest.mark.parametrize("term", sorted(VLLM_CHANGES))
def test_a_vllm_release_that_changes_a_term_starts_its_source_row(term):
    for since in sorted(VLLM_CHANGES[term], key=known_version):
        assert P.term_source("vllm", term, known_version(since)).since == since, (term, since)


def test_the_sources_resolve_by_release_within_each_range():
    graphs = [P.term_source("vllm", T.CUDA_GRAPHS, known_version(v)).rule
              for v in ("0.7.3", "0.17.1", "0.18.0", "0.19.1", "0.20.0")]
    assert graphs == ["capture-sizes-x-layers-after-kv", "full-and-piecewise-capture-sizes-after-kv",
                      "vllm-graph-estimate-after-kv-measured-per-graph", "vllm-graph-estimate-after-kv-measured-per-graph",
                      "vllm-graph-estimate-in-budget-measured-per-graph"]
    sampler = [P.term_source("vllm", T.SAMPLER_PEAK, known_version(v)).rule
               for v in ("0.6.4", "0.16.0", "0.17.0", "0.28.0", "0.29.0", "0.33.0")]
    assert sampler == ["v0-fp32-sort-after-forward-driver-rank", "torch-sort-after-forward", "triton-top-k-top-p-after-forward",
                       "flashinfer-top-k-top-p-after-forward", "plain-logits-v2-runner",
                       "flashinfer-top-k-top-p-v2-runner"]
    forward = [P.term_source("vllm", T.FORWARD_PEAK, known_version(v)).rule for v in ("0.13.0", "0.14.0", "0.18.0")]
    assert forward == ["dense-mlp-and-logits-calibrated+fused-moe-chunk-16384",
                       "dense-mlp-and-logits-calibrated+fused-moe-held-workspace",
                       "dense-mlp-and-logits-calibrated+fused-moe-held-workspace-whole-batch"]
    assert P.term_source("llamacpp", T.KV_CACHE, known_version("b7044")).since == "b0"
    assert P.term_source("llamacpp", T.KV_CACHE, known_version("b7045")).since == "b7045"


@pytest.mark.parametrize("version,env,rule,from_env", [
    ("0.11.0", None, "flashinfer-top-k-top-p-after-forward", False),  # GPUStack's runner image has FlashInfer
    ("0.11.0", "0", "torch-sort-after-forward", True),  # a bare pip install, or the env turning it off
    ("0.11.1", None, "torch-sort-after-forward", False), ("0.11.1", "1", "flashinfer-top-k-top-p-after-forward", True),
    ("0.21.0", "0", "triton-top-k-top-p-after-forward", True), ("0.21.0", "1", "flashinfer-top-k-top-p-after-forward",
                                                                 False),  # 1 is 0.21's own default: its row stands
])
def test_the_sampler_row_names_the_path_the_deployments_env_picked(version, env, rule, from_env):
    from gpustack_guard.adapters.model_sources.catalog import catalog_facts
    from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm
    from gpustack_guard.core.units import GiB

    est = estimate_vllm(catalog_facts("Qwen/Qwen2.5-7B-Instruct"), 24 * GiB,
                        VllmConfig(max_model_len=8192, flashinfer_sampler_env=env), version=version)
    (row,) = [r for r in T.budget_terms(est) if r.term == T.SAMPLER_PEAK]
    assert (row.rule, row.source.startswith(f"VLLM_USE_FLASHINFER_SAMPLER={env} ")) == (rule, from_env)


@pytest.mark.parametrize("version,gpu,env,sampler,warmup", [
    # 0.8.0-0.10.1 fall back to V0 below compute capability 8.0: V0's sort, no post-KV warm-up, whatever the env
    ("0.9.0", "Tesla T4", {}, "v0-fp32-sort-after-forward-driver-rank", "none-v0"),
    ("0.9.0", "Tesla T4", {"flashinfer_sampler_env": "0"}, "v0-fp32-sort-after-forward-driver-rank", "none-v0"),
    ("0.10.1", "Tesla V100-SXM2-32GB", {"flashinfer_sampler_env": "1"}, "v0-fp32-sort-after-forward-driver-rank",
     "none-v0"),
    ("0.10.1", "NVIDIA L4", {"use_v1_env": "0"}, "v0-fp32-sort-after-forward-driver-rank", "none-v0"),
    # the neighbours that run V1: the release's own rows
    ("0.9.0", "NVIDIA L4", {}, "flashinfer-top-k-top-p-after-forward", "post-kv-sampler-warmup"),
    ("0.10.2", "Tesla T4", {}, "flashinfer-top-k-top-p-after-forward", "post-kv-sampler-warmup"),
    # V1 opted into before it was the default: its alpha's profile computes logits and samples nothing, and no
    # sampler warm-up follows the KV cache (gpu_model_runner.py / gpu_worker.py@v0.7.3)
    ("0.7.3", "NVIDIA L4", {"use_v1_env": "1"}, "none-v1-alpha", "none-v1-alpha"),
    ("0.7.3", "NVIDIA L4", {}, "v0-fp32-sort-after-forward-driver-rank", "none-v0"),
])
def test_the_rows_name_the_engine_generation_the_estimate_ran(version, gpu, env, sampler, warmup):
    from gpustack_guard.adapters.model_sources.catalog import catalog_facts
    from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm
    from gpustack_guard.core.units import GiB

    est = estimate_vllm(catalog_facts("Qwen/Qwen2.5-7B-Instruct"), 24 * GiB, VllmConfig(max_model_len=4096, **env),
                        version=version, gpu_name=gpu)
    rules = {r.term: r.rule for r in T.budget_terms(est)}
    assert (rules[T.SAMPLER_PEAK], rules[T.SAMPLER_WARMUP]) == (sampler, warmup)


def test_the_generation_boundaries_are_the_profile_tables():
    first_v1 = next(p for p in P.VLLM_PROFILES if p.engine == "v1")
    assert first_v1.since == P.VLLM_V1_DEFAULT_SINCE
    assert P.vllm_profile(P.VLLM_LAST_V0_DEFAULT).engine == "v0"
