"""Mutated config.json documents through the facts reader and every engine's arithmetic: a value of any type
or size ends as BadConfig or a ValueError the estimation stage reports (GSG030/GSG016), never anything else."""

import json
import math
import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpustack_guard.core.memory.engine import estimate
from gpustack_guard.core.memory.hfconfig import BadConfig, facts_from_config
from gpustack_guard.core.spec.model import Policy

REPO = Path(__file__).resolve().parents[3]
BASES = [json.loads((REPO / "benchmarks" / "vectors" / "qwen2.5-vl-7b" / "config.json").read_text()),
         {"model_type": "llama", "hidden_size": 2048, "num_attention_heads": 32, "num_key_value_heads": 8,
          "num_hidden_layers": 16, "intermediate_size": 8192, "vocab_size": 128256, "max_position_embeddings": 8192},
         {"model_type": "mixtral", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
          "num_hidden_layers": 32, "intermediate_size": 14336, "vocab_size": 32000, "num_local_experts": 8,
          "num_experts_per_tok": 2, "max_position_embeddings": 32768, "sliding_window": 4096}]
KEYS = sorted({k for base in BASES for k in base} | {"head_dim", "multi_query", "attn_config", "rope_scaling",
                                                      "layer_types", "quantization_config", "kv_lora_rank",
                                                      "n_head_kv", "expansion_ratio", "padded_vocab_size"})
VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.integers(2**31, 2**70), st.text(max_size=8),
                   st.floats(allow_nan=True, allow_infinity=True), st.lists(st.integers(-2, 5), max_size=4),
                   st.dictionaries(st.sampled_from(["type", "factor", "kv_n_heads", "quant_method", "bits"]),
                                   st.one_of(st.integers(-2, 10**6), st.text(max_size=6), st.floats()), max_size=3))
GPUS = [(24 * 2**30, "NVIDIA GeForce RTX 4090")]
EXAMPLES = int(os.environ.get("GSG_FUZZ_EXAMPLES", "150"))  # more for a local soak of the fuzzer


@settings(max_examples=EXAMPLES, deadline=2000, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(range(len(BASES))), changes=st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=4),
       vision=st.dictionaries(st.sampled_from(["depth", "num_hidden_layers", "hidden_size", "intermediate_size",
                                               "patch_size", "spatial_merge_size", "out_hidden_size"]), VALUES,
                              max_size=2))
def test_no_config_value_escapes_as_another_error(base, changes, vision):
    config = {**BASES[base], **changes}
    if vision and isinstance(config.get("vision_config"), dict):
        config["vision_config"] = {**config["vision_config"], **vision}
    try:
        facts = facts_from_config(config, "config:fuzz.json")
    except BadConfig:
        return
    for family in ("vllm", "sglang", "llamacpp"):
        try:
            est = estimate(family, facts, GPUS, {"max-model-len": "4096"}, None, Policy())
        except ValueError:  # UnsupportedModel, missing facts, a length vLLM refuses: a finding with its line
            continue
        assert est.weights >= 0 and math.isfinite(est.kv_capacity_tokens)


FLAG_NAMES = {"vllm": ["gpu-memory-utilization", "max-model-len", "max-num-seqs", "max-num-batched-tokens",
                       "tensor-parallel-size", "pipeline-parallel-size", "block-size", "kv-cache-dtype",
                       "cpu-offload-gb", "max-loras", "max-lora-rank", "enable-lora", "kv-cache-memory",
                       "num-gpu-blocks-override", "enforce-eager", "enable-expert-parallel", "quantization"],
              "sglang": ["mem-fraction-static", "context-length", "max-running-requests", "max-total-tokens",
                         "chunked-prefill-size", "cuda-graph-max-bs", "tp-size", "pp-size", "page-size"],
              "llamacpp": ["ctx-size", "parallel", "gpu-layers", "batch-size", "ubatch-size", "tensor-split",
                           "flash-attn", "cache-type-k"]}
FLAG_VALUES = st.one_of(st.none(), st.sampled_from(["0", "-1", "1", "2", "8", "0.5", "1.5", "nan", "inf", "-inf",
                                                    "1e400", "16k", "auto", "all", "fp8", "true", "false", "",
                                                    "9" * 30, "1,2", "3/1", "0x10"]), st.text(max_size=6))


@settings(max_examples=EXAMPLES * 4 // 3, deadline=2000, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(family=st.sampled_from(sorted(FLAG_NAMES)), data=st.data())
def test_no_flag_value_escapes_as_another_error(family, data):
    flags = data.draw(st.dictionaries(st.sampled_from(FLAG_NAMES[family]), FLAG_VALUES, max_size=4))
    facts = facts_from_config(BASES[data.draw(st.sampled_from(range(len(BASES))))], "config:fuzz.json")
    gpus = GPUS * data.draw(st.sampled_from([1, 2, 4]))
    try:
        est = estimate(family, facts, gpus, flags, data.draw(st.sampled_from([None, "0.6.3", "0.11.0", "0.5.5"])),
                       Policy())
    except ValueError:  # FlagValueError (GSG016), UnsupportedModel, a refused length: each a finding
        return
    assert est.weights >= 0 and math.isfinite(est.kv_capacity_tokens)
