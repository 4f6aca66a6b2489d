"""llama-server's LLAMA_ARG_ variables (profiles.LLAMACPP_ENV_ARGS): read when the flag is not given, the flag
beating the variable, only at the builds that read them, and a value llama-server exits on refused by name."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory import engine
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import GiB, MiB

H100 = [(80 * GiB, "NVIDIA H100 80GB HBM3")]
QWEN25_7B = "Qwen/Qwen2.5-7B"  # 28 layers x 4 KV heads x 128 x 2 (K and V) x 2 B (f16) = 57,344 B a cell
LLAMA31_8B = "meta-llama/Llama-3.1-8B-Instruct"  # 32 x 8 x 128 x 2 x 2 = 131,072 B a cell
CELL = {QWEN25_7B: 57344, LLAMA31_8B: 131072}


def estimate(model: str, flags: dict | None = None, env: dict | None = None, version: str = "b10507",
             booking: bool = False):
    return engine.estimate("llamacpp", catalog_facts(model), H100, flags or {}, version, Policy(), env=env,
                           booking=booking)


@pytest.mark.parametrize("model", [QWEN25_7B, LLAMA31_8B])
def test_the_context_from_the_env_sizes_the_cache(model):
    est = estimate(model, env={"LLAMA_ARG_CTX_SIZE": "16384"})
    assert est.kv_capacity_tokens == 16384 and est.kv_cache == 16384 * CELL[model]
    assert est.extra["context"]["why"] == "ctx 16384 (env LLAMA_ARG_CTX_SIZE)"
    assert est.extra["from_env"] == {"ctx-size": "LLAMA_ARG_CTX_SIZE"}
    assert "ctx 16384 (env LLAMA_ARG_CTX_SIZE)" in est.notes[-1]


def test_the_flag_beats_the_env():
    est = estimate(QWEN25_7B, {"ctx-size": "8192"}, {"LLAMA_ARG_CTX_SIZE": "16384"})
    assert est.kv_capacity_tokens == 8192 and est.kv_cache == 8192 * 57344
    assert "from_env" not in est.extra and est.extra["context"]["why"] == "--ctx-size 8,192"


def test_a_cache_type_from_the_env_halves_the_bytes():
    # q8_0: 34 bytes a block of 32 = 1.0625 B an element against f16's 2
    given = estimate(LLAMA31_8B, {"ctx-size": "8192"})
    both = estimate(LLAMA31_8B, {"ctx-size": "8192"}, {"LLAMA_ARG_CACHE_TYPE_K": "q8_0", "LLAMA_ARG_CACHE_TYPE_V":
                                                       "q8_0", "LLAMA_ARG_FLASH_ATTN": "on"})
    assert given.kv_cache == 8192 * 131072 == 1024 * MiB
    assert both.kv_cache == 8192 * 32 * 8 * 128 * 2 * 34 // 32 == 544 * MiB


def test_the_slots_from_the_env_split_the_cache():
    # -np 4 --no-kv-unified from the env, no -c at b10507: --fit takes n_ctx_train per stream, 4 x 32,768 cells
    est = estimate(QWEN25_7B, env={"LLAMA_ARG_N_PARALLEL": "4", "LLAMA_ARG_KV_UNIFIED": "off"})
    assert est.extra["from_env"] == {"parallel": "LLAMA_ARG_N_PARALLEL", "no-kv-unified": "LLAMA_ARG_KV_UNIFIED"}
    assert est.kv_capacity_tokens == 4 * 32768 and est.kv_cache == 4 * 32768 * 57344 == 7516192768
    assert est.requested == 22420787200
    flagged = estimate(QWEN25_7B, {"parallel": "4", "no-kv-unified": None})
    assert (flagged.kv_cache, flagged.requested) == (est.kv_cache, est.requested)
    assert estimate(QWEN25_7B).kv_capacity_tokens == 32768  # without them: one unified cache of n_ctx_train


def test_the_offload_from_the_env_moves_layers():
    # -ngl 10 at b10507 takes the output layer first (LLAMACPP_OUTPUT_FIRST_SINCE): 9 of 28 blocks' KV on the GPU
    est = estimate(QWEN25_7B, {"ctx-size": "8192"}, {"LLAMA_ARG_N_GPU_LAYERS": "10"})
    assert est.kv_cache == 8192 * 9 * 2048 == 150994944 and est.weights == 5285035008
    assert "ngl 10 (env LLAMA_ARG_N_GPU_LAYERS)" in est.notes[-1]
    assert estimate(QWEN25_7B, {"ctx-size": "8192"}).weights == 14141231104  # everything offloaded
    beaten = estimate(QWEN25_7B, {"ctx-size": "8192", "gpu-layers": "all"}, {"LLAMA_ARG_N_GPU_LAYERS": "10"})
    assert beaten.weights == 14141231104 and beaten.kv_cache == 8192 * 57344


def test_the_negated_variable_reads_as_off():
    est = estimate(QWEN25_7B, {"ctx-size": "16384", "parallel": "4"}, {"LLAMA_ARG_NO_KV_UNIFIED": "1"})
    assert est.extra["from_env"] == {"no-kv-unified": "LLAMA_ARG_NO_KV_UNIFIED"}


def test_a_build_without_the_variable_ignores_it():
    # LLAMA_ARG_KV_UNIFIED is read from b9518 (0.3.26's arg.cpp; absent at 0.3.16's 4227c9be); the context from b5763
    old = estimate(QWEN25_7B, {"ctx-size": "16384", "parallel": "4"}, {"LLAMA_ARG_KV_UNIFIED": "off"}, "b8000")
    assert "from_env" not in old.extra
    assert "from_env" not in estimate(QWEN25_7B, env={"LLAMA_ARG_CTX_SIZE": "16384"}, version="b5000").extra


def test_gpustacks_booking_reads_no_variable():
    est = estimate(QWEN25_7B, env={"LLAMA_ARG_CTX_SIZE": "16384"}, booking=True)
    assert est.kv_capacity_tokens == P.GPUSTACK_BOOKING_CTX


@pytest.mark.parametrize(("env", "message"), [
    ({"LLAMA_ARG_CTX_SIZE": "lots"}, "env LLAMA_ARG_CTX_SIZE 'lots': "),
    ({"LLAMA_ARG_N_GPU_LAYERS": "-5"}, "env LLAMA_ARG_N_GPU_LAYERS '-5': "),
    ({"LLAMA_ARG_UBATCH": "0"}, "env LLAMA_ARG_UBATCH '0': "),
    ({"LLAMA_ARG_KV_UNIFIED": "maybe"}, "env LLAMA_ARG_KV_UNIFIED 'maybe': llama.cpp exits at start-up"),
])
def test_a_value_the_engine_refuses_names_the_variable(env, message):
    with pytest.raises(engine.EnvValueError) as caught:
        estimate(QWEN25_7B, env=env)
    assert str(caught.value).startswith(message)


def test_a_refused_variable_under_a_flag_is_not_read():
    est = estimate(QWEN25_7B, {"ctx-size": "8192"}, {"LLAMA_ARG_CTX_SIZE": "lots"})
    assert est.kv_capacity_tokens == 8192


def test_a_switch_reads_only_a_truthy_text():
    assert estimate(QWEN25_7B, {"ctx-size": "8192"}, {"LLAMA_ARG_SWA_FULL": "maybe"}).extra.get("from_env") is None
    on = estimate(QWEN25_7B, {"ctx-size": "8192"}, {"LLAMA_ARG_SWA_FULL": "true"})
    assert on.extra["from_env"] == {"swa-full": "LLAMA_ARG_SWA_FULL"}


def test_every_row_names_a_flag_gsg_reads_and_its_source():
    for row in P.LLAMACPP_ENV_ARGS:
        assert row.env.startswith(P.LLAMACPP_ENV_PREFIX) and "arg.cpp@" in row.source
        assert row.kind in ("value", "switch", "bool") and (row.off is not None) == (row.kind == "bool")


def test_flash_attention_from_the_env_follows_the_builds_handler():
    # b6000 (before LLAMACPP_FLASH_AUTO_SINCE): -fa is a switch, run for a truthy text only; flash pads to 256 cells
    def at(version: str, text: str):
        return estimate(QWEN25_7B, {"ctx-size": "4100"}, {"LLAMA_ARG_FLASH_ATTN": text}, version)

    assert (at("b6000", "1").kv_capacity_tokens, at("b6000", "1").kv_cache) == (4352, 4352 * 57344)
    assert (at("b6000", "auto").kv_capacity_tokens, at("b6000", "auto").kv_cache) == (4128, 4128 * 57344)
    assert at("b7000", "auto").kv_capacity_tokens == 4352  # on|off|auto from b6325: auto counts as on
    assert at("b7000", "off").kv_capacity_tokens == 4128


def test_a_refusal_of_an_env_value_past_parsing_names_the_variable():
    env = {"LLAMA_ARG_N_PARALLEL": "1000", "LLAMA_ARG_KV_UNIFIED": "off"}
    with pytest.raises(engine.EnvValueError, match=r"^env LLAMA_ARG_N_PARALLEL '1000': llama.cpp b10507 splits 512 "):
        estimate(QWEN25_7B, {"ctx-size": "512"}, env)
    with pytest.raises(ValueError, match=r"^--parallel '1000': "):  # the flag's own refusal is unchanged
        estimate(QWEN25_7B, {"ctx-size": "512", "parallel": "1000", "no-kv-unified": None})
