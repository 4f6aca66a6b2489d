"""Sequence-classification checkpoints (reward models, classifiers) carry a score head, not the vocabulary's lm_head:
SGLang's LlamaForSequenceClassification (models/llama_reward.py@0.4.0.post1) builds the decoder and a
hidden x num_labels score layer. The docs CI's Skywork-Reward-Llama-3.1-8B run logs 14.11 GiB of weights where the
causal Llama-3.1-8B's 15.09 (tests/fixtures/logs/sglang/skywork-reward-llama31-8b-docs-ci-h100-2024-12-0.4.0.post1.log
against llama31-8b-docs-ci-h100-2024-10-0.3.4.post2.log): the 128,256 x 4,096 bf16 lm_head, 0.98 GiB."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.memory.weights import param_breakdown, weights_per_rank

SKYWORK = Path(__file__).resolve().parents[3] / "benchmarks" / "vectors" / "skywork-reward-llama-3.1-8b" / "config.json"


def _config(**changes) -> dict:
    config = json.loads(SKYWORK.read_text(encoding="utf-8"))
    config.update(changes)
    return config


def test_reward_model_has_a_one_label_score_head_instead_of_the_lm_head():
    reward = facts_from_config(_config(), "skywork")
    causal = facts_from_config(_config(architectures=["LlamaForCausalLM"]), "llama")
    assert (reward.classifier_labels, causal.classifier_labels) == (1, 0)
    assert param_breakdown(reward).lm_head == 4096
    assert param_breakdown(causal).lm_head == 128256 * 4096
    # bf16: the causal model's 128,256 x 4,096 x 2 B more, less the score head's 4,096 x 2 B
    assert weights_per_rank(causal, 1, 1) - weights_per_rank(reward, 1, 1) == (128256 - 1) * 4096 * 2


@pytest.mark.parametrize("changes,labels", [
    ({"id2label": {"0": "A", "1": "B", "2": "C"}}, 3),  # id2label wins over num_labels, as transformers reads it
    ({"id2label": None, "num_labels": 5}, 5),
    ({"id2label": None}, 2),  # transformers' PretrainedConfig default
    ({"id2label": None, "num_labels": "7"}, 2),  # not a count: the default, not a crash
    ({"id2label": None, "num_labels": True}, 2),
    ({"id2label": None, "num_labels": -3}, 2),
    ({"id2label": [], "num_labels": 4}, 4),
])
def test_label_count_follows_transformers_and_survives_bad_values(changes, labels):
    assert facts_from_config(_config(**changes), "x").classifier_labels == labels


@pytest.mark.parametrize("architecture", ["Qwen2ForCausalLM", "LlamaForTokenClassification", "Qwen2ForRewardModel"])
def test_other_heads_keep_their_output_layer(architecture):
    # a causal LM's config often carries id2label too; token classifiers and Qwen2's reward class are not read here
    facts = facts_from_config(_config(architectures=[architecture]), "x")
    assert facts.classifier_labels == 0
    assert param_breakdown(facts).lm_head == 128256 * 4096


def test_tied_classifier_counts_its_score_head_not_zero():
    # a tied causal model books no lm_head (the embedding serves); a tied classifier still loads its score layer
    facts = facts_from_config(_config(tie_word_embeddings=True, id2label={"0": "a", "1": "b"}), "x")
    assert param_breakdown(facts).lm_head == 2 * 4096
    assert param_breakdown(replace(facts, classifier_labels=0)).lm_head == 0
