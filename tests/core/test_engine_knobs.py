"""Which engine's flags a hint names, from the engine names whose metrics were seen."""

from gpustack_guard.core.engine_knobs import KNOBS, family_of


def test_one_engine_among_the_names_is_its_family():
    assert family_of(["SGLang"]) == "sglang"
    assert family_of(["GPUStack", "vLLM"]) == "vllm"  # GPUStack's exporter beside the engine's own /metrics
    assert family_of(["llama.cpp"]) == "llamacpp"


def test_no_engine_or_two_engines_is_unknown():
    assert family_of([]) is None
    assert family_of(["GPUStack"]) is None
    assert family_of(["vLLM", "SGLang"]) is None  # two different engines behind one soak: no single flag set


def test_every_engine_has_its_own_admission_flag_and_8_bit_kv():
    assert {f: (k.max_running, k.compact_kv_args()) for f, k in KNOBS.items()} == {
        "vllm": ("--max-num-seqs", "--kv-cache-dtype fp8"),
        "sglang": ("--max-running-requests", "--kv-cache-dtype fp8_e5m2"),
        "llamacpp": ("--parallel", "--cache-type-k q8_0 --cache-type-v q8_0 --flash-attn on")}
