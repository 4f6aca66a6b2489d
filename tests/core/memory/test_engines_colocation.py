"""Co-located instances on one GPU in apply order, by each engine's own semantics
(docs/memory-arithmetic.md, "Co-location")."""

from __future__ import annotations

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.memory.colocation import OOM, REFUSES, STARTS, startup_sequence
from gpustack_guard.core.memory.engines.sglang import SglangConfig, estimate_sglang
from gpustack_guard.core.memory.engines.vllm import VllmConfig, estimate_vllm
from gpustack_guard.core.units import GiB, MiB

A6000 = 49_140 * MiB


def vllm(model: str, gmu: float, version: str = "0.11.0", total: int = A6000):
    return estimate_vllm(catalog_facts(model), total, VllmConfig(gpu_memory_utilization=gmu, max_model_len=8192),
                         version=version)


def test_two_small_models_at_045_start_a_third_is_refused():
    first, second = vllm("Qwen/Qwen3-8B", 0.45), vllm("meta-llama/Llama-3.1-8B", 0.45)
    third = vllm("Qwen/Qwen2.5-0.5B", 0.45)
    checks = startup_sequence(A6000, 0, [("qwen3-8b", first), ("llama-8b", second), ("qwen-0.5b", third)])
    assert [c.outcome for c in checks] == [STARTS, STARTS, REFUSES]
    assert checks[1].free_at_start == A6000 - first.footprint
    assert checks[2].free_at_start == A6000 - first.footprint - second.footprint
    assert "less than desired GPU memory utilization (0.45" in checks[2].reason
    # each holds its budget plus CUDA context plus graphs captured after the KV cache; nothing twice
    assert first.footprint == first.requested + P.CUDA_CONTEXT + first.cuda_graphs
    assert first.footprint + second.footprint <= A6000


def test_v21_free_memory_check_on_an_8_gib_card():
    # docker/model-runner PR #414 (vLLM 0.11.0): "Free memory on device (6.96/8.0 GiB) on startup is less than
    # desired GPU memory utilization (0.9, 7.2 GiB)"; 0.5 starts
    foreign = 8 * GiB - int(6.96 * GiB) - P.CUDA_CONTEXT
    at_09 = startup_sequence(8 * GiB, foreign, [("smollm2", vllm("Qwen/Qwen2.5-0.5B", 0.9, total=8 * GiB))])
    at_05 = startup_sequence(8 * GiB, foreign, [("smollm2", vllm("Qwen/Qwen2.5-0.5B", 0.5, total=8 * GiB))])
    assert at_09[0].outcome == REFUSES and at_05[0].outcome == STARTS


def test_v0_before_064_caps_the_whole_gpu():
    first, second = vllm("Qwen/Qwen3-8B", 0.45, "0.5.4"), vllm("Qwen/Qwen3-8B", 0.45, "0.5.4")
    assert first.extra["gmu_semantics"] == "global-cap"
    checks = startup_sequence(A6000, 0, [("a", first), ("b", second)])
    assert [c.outcome for c in checks] == [STARTS, REFUSES]
    assert "caps the whole GPU" in checks[1].reason


def test_v0_per_instance_has_no_check_but_ooms():
    first, second = vllm("Qwen/Qwen3-8B", 0.6, "0.6.4"), vllm("Qwen/Qwen3-8B", 0.6, "0.6.4")
    checks = startup_sequence(A6000, 0, [("a", first), ("b", second)])
    assert [c.outcome for c in checks] == [STARTS, OOM]


def test_sglang_takes_its_fraction_of_what_is_free():
    facts = catalog_facts("Qwen/Qwen2.5-0.5B")
    est = estimate_sglang(facts, A6000, SglangConfig(mem_fraction_static=0.45), version="0.5.4")
    checks = startup_sequence(A6000, 0, [("a", est), ("b", est)])
    assert [c.outcome for c in checks] == [STARTS, STARTS]
    assert checks[0].holds == est.footprint  # alone on the GPU: exactly its own estimate
    assert checks[1].holds < checks[0].holds  # the second sees less free memory and sizes a smaller pool


def test_field_notes_70b_at_092_still_short_of_headroom():
    facts = catalog_facts("meta-llama/Llama-3.3-70B-Instruct")
    cfg = VllmConfig(tensor_parallel_size=4, gpu_memory_utilization=0.92, max_model_len=16384,
                     kv_cache_dtype="fp8", max_num_seqs=32)
    est = estimate_vllm(facts, A6000, cfg, version="0.11.0")
    assert est.headroom < est.headroom_needed  # GSG034
    assert est.footprint < A6000  # but what it holds at startup alone fits: no overcommit


def test_refusal_reads_like_vllm_in_gib():
    first, second, third = (vllm("Qwen/Qwen3-8B", 0.45) for _ in range(3))
    check = startup_sequence(A6000, 0, [("a", first), ("b", second), ("c", third)])[2]
    assert check.reason == ("free memory on device (0.61 GiB after CUDA/NCCL start-up) is less than desired GPU "
                            "memory utilization (0.45, 21.59 GiB)")


def test_extensible_kv_cache_has_no_startup_check_each_takes_its_cap_and_the_third_cannot_load():
    # vLLM 0.34: gmu is only a cap and the start-up check is skipped; each instance holds its cap plus the CUDA
    # context, and the third finds less free memory than its weights
    first, second, third = (vllm("Qwen/Qwen3-8B", 0.45, version="0.34.0") for _ in range(3))
    checks = startup_sequence(A6000, 0, [("a", first), ("b", second), ("c", third)])
    assert [c.outcome for c in checks] == [STARTS, STARTS, OOM]
    assert checks[0].holds == checks[1].holds == P.CUDA_CONTEXT + first.requested
    assert checks[2].free_at_start == A6000 - 2 * checks[0].holds
    assert checks[2].reason.startswith("its weights, graphs and non-torch memory")
    # a small third model fits in what two at 0.40 leave, sized from the free memory, not from its 0.45 cap
    a, b = (vllm("Qwen/Qwen3-8B", 0.40, version="0.34.0") for _ in range(2))
    small = vllm("Qwen/Qwen2.5-0.5B", 0.45, version="0.34.0")
    fitted = startup_sequence(A6000, 0, [("a", a), ("b", b), ("c", small)])[2]
    # the device bound binds: it holds all it found but vLLM's margin
    assert fitted.outcome == STARTS and fitted.free_at_start < small.requested
    assert fitted.free_at_start - fitted.holds == max(GiB, int(0.75 * small.activation))
    # where engine use, margin and transient peak take all that is left, there is no pool: it refuses
    big = vllm("Qwen/Qwen3-8B", 0.46, version="0.34.0")
    squeezed = startup_sequence(A6000, 0, [("a", big), ("b", big), ("c", small)])[2]
    assert squeezed.outcome == REFUSES and "leave no KV cache" in squeezed.reason
