"""Speculative decoding is not in the arithmetic yet: an estimate with a draft says so instead of staying silent."""

from __future__ import annotations

import pytest

from gpustack_guard.adapters.model_sources.catalog import catalog_facts
from gpustack_guard.core.memory.engine import vllm_config
from gpustack_guard.core.memory.engines.vllm import estimate_vllm
from gpustack_guard.core.spec.model import Policy
from gpustack_guard.core.units import GiB

QWEN3_8B = catalog_facts("Qwen/Qwen3-8B")


def notes_for(flags: dict) -> list[str]:
    est = estimate_vllm(QWEN3_8B, 80 * GiB, vllm_config(flags, Policy()), version="0.11.0")
    return [n for n in est.notes if "speculative" in n]


@pytest.mark.parametrize("flags,named", [
    ({"speculative-config": '{"method": "eagle3", "model": "a/b", "num_speculative_tokens": 3}'},
     "--speculative-config (method eagle3, draft a/b): the CUDA graphs are sized for 4 tokens per decode request"),
    ({"speculative-config": '{"method": "mtp", "num_speculative_tokens": 1}'},
     "--speculative-config (method mtp): the CUDA graphs are sized for 2 tokens per decode request"),
    ({"speculative-model": "a/b", "num-speculative-tokens": "3"},  # before 0.8
     "--speculative-model (draft a/b): the CUDA graphs are sized for 4 tokens per decode request"),
    ({"num-speculative-tokens": "3"}, "--num-speculative-tokens: the CUDA graphs are sized for 4 tokens"),
])
def test_a_draft_with_memory_is_named_in_a_note(flags, named):
    notes = notes_for(flags)
    assert len(notes) == 1 and notes[0].startswith(named)
    assert notes[0].endswith("the drafter is not counted (gsg reads no draft config): its weights, KV cache and "
                             "profile run (or the MTP layers) come on top of these figures")


@pytest.mark.parametrize("flags", [
    {},
    {"speculative-config": '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}'},
    {"speculative-model": "[ngram]", "num-speculative-tokens": "3"},  # the 0.6-era spelling of n-gram lookup
])
def test_no_draft_or_ngram_lookup_adds_no_note(flags):
    assert notes_for(flags) == []
