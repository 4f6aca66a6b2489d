"""llama-server's --kv-unified-per-slot N (profiles.LLAMACPP_KV_PER_SLOT_SINCE, read at llama.cpp 0c1e57098): without
-c the KV pool is n_parallel x N cells (tools/server/server.cpp), and every slot holds min(n_ctx_seq, N) tokens
(server-context.cpp n_ctx_slot). The figures of llama.cpp PR #24124's own runs: `--kv-unified-per-slot 4096` gives a
16,384-cell pool of four 4,096-token slots; `-c 8192 --kv-unified-per-slot 4096` caps each slot of the 8,192-cell
pool at 4,096. Before this round the flag was not read: the pool was the model's trained context."""

import json

import pytest

LLAMA = ("-m", "meta-llama/Llama-3.1-8B-Instruct", "-q", "q4_k_m")
QWEN = ("-m", "Qwen/Qwen2.5-7B-Instruct", "-q", "q4_k_m")


def estimate(gsg, model, version, *flags, memory="24GiB"):
    args = ["estimate", *model, "--gpu-memory", memory, "--backend", "llama.cpp", "-o", "json"]
    if version:
        args += ["--backend-version", version]
    result = gsg(*args, "--", *flags)
    assert result.code == 0, result.err
    return json.loads(result.out)


def shape(doc):
    return doc["kv_capacity_tokens"], doc["max_model_len"], doc["max_num_seqs"], doc["extra"]["context"]["source"]


@pytest.mark.parametrize("model, kv_bytes_per_cell", [(LLAMA, 131072), (QWEN, 57344)])
@pytest.mark.parametrize("version", ["b10507", None])
@pytest.mark.parametrize("flags, expected", [
    # PR #24124: four automatic slots of 4,096, the pool sized to them
    (("--kv-unified-per-slot", "4096"), (16384, 4096, 4, "kv-unified-per-slot")),
    (("-np", "2", "--kv-unified", "--kv-unified-per-slot", "8192"), (16384, 8192, 2, "kv-unified-per-slot")),
    # -c given: the pool is -c's, the cap binds where it is under n_ctx_seq (PR #24124's second run)
    (("-c", "8192", "--kv-unified-per-slot", "4096"), (8192, 4096, 4, "given")),
    (("-c", "8192", "--kv-unified-per-slot", "16384"), (8192, 8192, 4, "given")),  # "cap has no effect"
    # N <= 0 is unset (server.cpp reads kv_unified_per_slot > 0)
    (("-c", "8192", "--kv-unified-per-slot", "0"), (8192, 8192, 4, "given")),
])
def test_the_pool_and_the_slot_length(gsg, model, kv_bytes_per_cell, version, flags, expected):
    doc = estimate(gsg, model, version, *flags)
    assert shape(doc) == expected
    assert doc["kv_cache_bytes_per_gpu"] == expected[0] * kv_bytes_per_cell  # one GPU holds every layer's cells


def test_a_cap_that_binds_is_named_and_one_that_does_not_is_not(gsg):
    capped = estimate(gsg, LLAMA, "b10507", "-c", "8192", "--kv-unified-per-slot", "4096")
    assert "--kv-unified-per-slot 4,096: each slot holds at most 4,096 tokens of the 8,192-cell pool (llama-server's " \
           "'capping per-slot context')" in capped["notes"]
    loose = estimate(gsg, LLAMA, "b10507", "-c", "8192", "--kv-unified-per-slot", "16384")
    assert not any("kv-unified-per-slot" in note for note in loose["notes"])


def test_the_sized_pool_is_a_set_context_that_fit_does_not_shorten(gsg):
    # 4 x 16,384 = 65,536 cells (8 GiB of f16 KV) on a 12 GiB GPU: --fit may only move layers, as llama.cpp's
    # fit sees a context set (cparams n_ctx != 0); without the flag it shortens the trained context instead
    doc = estimate(gsg, LLAMA, "b10507", "--kv-unified-per-slot", "16384", memory="12GiB")
    assert doc["kv_capacity_tokens"] == 65536 and doc["max_model_len"] == 16384
    assert doc["extra"]["context"]["source"] == "kv-unified-per-slot"
    plain = estimate(gsg, LLAMA, "b10507", memory="12GiB")
    assert plain["extra"]["context"]["source"] == "fit-shortened"


def test_builds_before_the_flag_do_not_read_it(gsg):
    # b9518 has no --kv-unified-per-slot (gsg's table): the pool stays the build's default context
    doc = estimate(gsg, LLAMA, "b9518", "-c", "8192", "--kv-unified-per-slot", "4096")
    assert shape(doc) == (8192, 8192, 4, "given")


def test_the_variable_reads_as_the_flag(gsg):
    from gpustack_guard.core.memory import profiles as P
    row = next(row for row in P.llamacpp_env_args("b10507") if row.option == "kv-unified-per-slot")
    assert (row.env, row.kind) == ("LLAMA_ARG_KV_UNIFIED_PER_SLOT", "value")
    assert all(row.option != "kv-unified-per-slot" for row in P.llamacpp_env_args("b9518"))


@pytest.mark.parametrize("model, cell", [("Qwen/Qwen2.5-7B", 57344), ("meta-llama/Llama-3.1-8B-Instruct", 131072)])
def test_the_variable_sizes_the_pool_and_the_flag_beats_it(model, cell):
    from gpustack_guard.adapters.model_sources.catalog import catalog_facts
    from gpustack_guard.core.memory import engine
    from gpustack_guard.core.spec.model import Policy
    from gpustack_guard.core.units import GiB

    def run(flags, env):
        return engine.estimate("llamacpp", catalog_facts(model), [(80 * GiB, "NVIDIA H100 80GB HBM3")], flags,
                               "b10507", Policy(), env=env)
    est = run({}, {"LLAMA_ARG_KV_UNIFIED_PER_SLOT": "2048"})
    assert (est.kv_capacity_tokens, est.max_model_len, est.kv_cache) == (8192, 2048, 8192 * cell)
    est = run({"kv-unified-per-slot": "1024"}, {"LLAMA_ARG_KV_UNIFIED_PER_SLOT": "2048"})
    assert (est.kv_capacity_tokens, est.max_model_len) == (4096, 1024)
