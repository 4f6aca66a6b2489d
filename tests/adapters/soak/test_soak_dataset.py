"""--dataset: JSONL lengths, prompts, ShareGPT conversations (JSONL or one JSON list), and every mistake named
with its file:line; the prompts replayed carry the nonce, drawn with equal chances, seeded."""

from __future__ import annotations

import json

import pytest

from gpustack_guard.adapters.soak.dataset import MAX_PROMPT_CHARS, load_dataset
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.soak.load_model import SoakLimits
from gpustack_guard.core.soak.prompts import WorkloadEntry, prompt_for

LIMITS = SoakLimits()


def _write(tmp_path, lines, name="data.jsonl"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_lengths_prompts_and_sharegpt_records_in_one_jsonl(tmp_path):
    path = _write(tmp_path, [
        '{"prompt_tokens": 812, "output_tokens": 128}',
        '{"prompt_tokens_count": 40, "output_tokens_count": 7}',  # GuideLLM's column names
        '',
        '{"prompt": "What is a KV cache?", "output_tokens": 64}',  # 19 characters: 5 tokens
        '{"text": "abcdefgh"}',  # no output length: --max-tokens
        json.dumps({"conversations": [{"from": "human", "value": "x" * 400}, {"from": "gpt", "value": "y" * 41}]}),
        json.dumps({"messages": [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]}),
        json.dumps({"conversations": [{"from": "human", "value": "a question without a reply"}]}),
        json.dumps({"conversations": [{"from": "gpt", "value": "a reply first"}, {"from": "human", "value": "q"}]}),
    ])
    dataset = load_dataset(path, default_output=32, limits=LIMITS)
    assert dataset.entries == [
        WorkloadEntry(812, 128), WorkloadEntry(40, 7),
        WorkloadEntry(5, 64, text="What is a KV cache?"), WorkloadEntry(2, 32, text="abcdefgh"),
        WorkloadEntry(100, 11, text="x" * 400), WorkloadEntry(2, 1, text="hello"),
    ]
    assert dataset.skipped == 2  # as vllm bench serve: a conversation without a prompt and a reply


def test_sharegpt_as_one_json_list(tmp_path):
    records = [{"id": "a", "conversations": [{"from": "human", "value": "q" * 8}, {"from": "gpt", "value": "r" * 9}]},
               {"id": "b", "conversations": []}]
    path = tmp_path / "sharegpt.json"
    path.write_text(json.dumps(records, indent=1), encoding="utf-8")
    dataset = load_dataset(str(path), 32, LIMITS)
    assert (dataset.entries, dataset.skipped) == ([WorkloadEntry(2, 3, text="q" * 8)], 1)


@pytest.mark.parametrize("line,message", [
    ('{"prompt_tokens": 0, "output_tokens": 5}', "prompt_tokens must be a whole number >= 1, not 0"),
    ('{"prompt_tokens": 10, "output_tokens": 2.5}', "output_tokens must be a whole number >= 1, not 2.5"),
    ('{"prompt_tokens": true}', "prompt_tokens must be a whole number >= 1, not true"),
    ('{"prompt": ""}', "prompt must be a non-empty string"),
    ('{"prompt": 5}', "prompt must be a non-empty string"),
    ('{"conversations": "hello"}', "conversations must be a list"),
    ('{"output_tokens": 5}', "no prompt, prompt_tokens or conversations"),
    ('[1, 2]', "not a JSON object"),
    ('{"prompt": "unterminated', "not a JSON object; expected one record a line"),
])
def test_a_bad_record_is_named_with_its_line(tmp_path, line, message):
    path = _write(tmp_path, ['{"prompt_tokens": 8, "output_tokens": 4}', line])
    with pytest.raises(GsgError) as caught:
        load_dataset(path, 32, LIMITS)
    assert str(caught.value).startswith(f"{path}:2: ")
    assert message in str(caught.value)


def test_files_that_cannot_be_a_dataset(tmp_path):
    with pytest.raises(GsgError, match="No such file or directory"):
        load_dataset(str(tmp_path / "missing.jsonl"), 32, LIMITS)
    with pytest.raises(GsgError, match="not a file"):
        load_dataset(str(tmp_path), 32, LIMITS)
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b'{"prompt": "\xff"}\n')
    with pytest.raises(GsgError, match="not UTF-8 text"):
        load_dataset(str(binary), 32, LIMITS)
    only_skipped = _write(tmp_path, [json.dumps({"conversations": [{"from": "human", "value": "q"}]})])
    with pytest.raises(GsgError, match=r"no usable record \(1 conversation\(s\) without a prompt and a reply\)"):
        load_dataset(only_skipped, 32, LIMITS)
    broken_list = tmp_path / "broken.json"
    broken_list.write_text('[\n{"prompt": "a"},\n{oops}\n]', encoding="utf-8")
    with pytest.raises(GsgError, match=r"broken.json:3: not JSON"):
        load_dataset(str(broken_list), 32, LIMITS)


def test_the_dataset_limits_are_named_when_hit(tmp_path):
    path = _write(tmp_path, ['{"prompt_tokens": 8, "output_tokens": 4}'] * 3)
    with pytest.raises(GsgError, match=r"3 records, over the 2 a dataset may have \(GSG_SOAK_MAX_DATASET_ENTRIES\)"):
        load_dataset(path, 32, SoakLimits(max_dataset_entries=2))
    assert len(load_dataset(path, 32, SoakLimits(max_dataset_entries=3)).entries) == 3  # at the limit: read
    with pytest.raises(GsgError, match=r"123 bytes, over the 122 a dataset may have \(GSG_SOAK_MAX_DATASET_BYTES\)"):
        load_dataset(path, 32, SoakLimits(max_dataset_bytes=122))
    long_prompt = _write(tmp_path, [json.dumps({"prompt": "x" * (MAX_PROMPT_CHARS + 1)})], "long.jsonl")
    with pytest.raises(GsgError, match=r"long.jsonl:1: a prompt of 4,194,305 characters \(at most 4,194,304\)"):
        load_dataset(long_prompt, 32, LIMITS)


def test_replayed_prompts_carry_the_nonce_and_are_drawn_evenly_and_seeded():
    entries = [WorkloadEntry(5, 64, text="What is a KV cache?"), WorkloadEntry(8, 4), WorkloadEntry(3, 2, text="hi")]
    prompt = prompt_for(7, 0, entries[:1], uniform=True)
    assert (prompt.text, prompt.prompt_tokens, prompt.max_tokens) == ("Request 7-0. What is a KV cache?", 5, 64)
    drawn = [prompt_for(7, i, entries, uniform=True).max_tokens for i in range(3000)]
    assert drawn == [prompt_for(7, i, entries, uniform=True).max_tokens for i in range(3000)]  # seeded
    assert all(900 <= drawn.count(n) <= 1100 for n in (64, 4, 2))  # each about a third
