"""--dataset: JSONL lengths, prompts, ShareGPT conversations (JSONL or one JSON list), and every mistake named
with its file:line; the prompts replayed carry the nonce, drawn with equal chances, seeded."""

from __future__ import annotations

import json
import os

import pytest

from gpustack_guard.adapters.soak.dataset import MAX_PROMPT_CHARS, load_dataset
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.soak.load_model import SoakLimits
from gpustack_guard.core.soak.prompts import MAX_PROMPT_TOKENS, WorkloadEntry, prompt_for

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
    with pytest.raises(GsgError, match="missing.jsonl: no such file or directory$"):
        load_dataset(str(tmp_path / "missing.jsonl"), 32, LIMITS)
    with pytest.raises(GsgError, match=r": not a regular file \(a folder\)$"):
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


def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path):
    fifo = tmp_path / "prompts.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(GsgError) as caught:
        load_dataset(str(fifo), 32, LIMITS)
    assert str(caught.value) == f"{fifo}: not a regular file (a FIFO)"


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_prompt_holding_a_character_python_splits_lines_at_is_one_record(tmp_path, separator):
    # JSON strings may hold these as they are; only '\n' ends a JSONL record
    path = tmp_path / "odd.jsonl"
    path.write_text(json.dumps({"prompt": f"one{separator}two", "output_tokens": 4}, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    assert load_dataset(str(path), 32, LIMITS).entries == [WorkloadEntry(2, 4, text=f"one{separator}two")]


@pytest.mark.parametrize("name", ["bom.jsonl", "bom.json"])
def test_a_byte_order_mark_is_no_part_of_the_first_record(tmp_path, name):
    path = tmp_path / name
    record = '{"prompt_tokens": 8, "output_tokens": 4}'
    path.write_bytes(b"\xef\xbb\xbf" + (f"[{record}]" if name.endswith(".json") else record).encode())
    assert load_dataset(str(path), 32, LIMITS).entries == [WorkloadEntry(8, 4)]


def test_a_prompt_length_past_the_cap_is_one_line_not_a_prompt_built_in_memory(tmp_path):
    at_cap = _write(tmp_path, [json.dumps({"prompt_tokens": MAX_PROMPT_TOKENS, "output_tokens": 4})], "cap.jsonl")
    assert load_dataset(at_cap, 32, LIMITS).entries == [WorkloadEntry(MAX_PROMPT_TOKENS, 4)]
    for name, value, shown in [("over", MAX_PROMPT_TOKENS + 1, "1,048,577"), ("absurd", 10**18, "a 19-digit number")]:
        path = _write(tmp_path, [json.dumps({"prompt_tokens": value})], f"{name}.jsonl")
        with pytest.raises(GsgError) as caught:
            load_dataset(path, 32, LIMITS)
        assert str(caught.value) == (f"{path}:1: prompt_tokens: a prompt length must be between 1 and 1,048,576 "
                                     f"tokens, not {shown}")


def test_an_integer_past_pythons_digit_limit_in_a_json_list_is_named_as_such(tmp_path):
    path = tmp_path / "digits.json"
    path.write_text('[{"prompt_tokens": ' + "9" * 5000 + "}]", encoding="utf-8")
    with pytest.raises(GsgError) as caught:
        load_dataset(str(path), 32, LIMITS)
    assert str(caught.value) == f"{path}: not JSON: a number of more than 4,300 digits"


def test_a_dataset_that_grows_past_its_cap_while_read_is_refused(tmp_path, monkeypatch):
    import gpustack_guard.adapters.files.regular_file as regular_file

    path = _write(tmp_path, ['{"prompt_tokens": 8, "output_tokens": 4}'] * 2)
    real_fstat = regular_file.os.fstat

    def stale_size(fd):  # the size seen on opening: the file grew by a writer since
        status = real_fstat(fd)
        return os.stat_result((*status[:6], 10, *status[7:]))

    monkeypatch.setattr(regular_file.os, "fstat", stale_size)
    with pytest.raises(GsgError) as caught:
        load_dataset(path, 32, SoakLimits(max_dataset_bytes=50))
    assert str(caught.value) == f"{path}: 51 bytes, over the 50 a dataset may have (GSG_SOAK_MAX_DATASET_BYTES)"


# read as every JSON file gsg reads (regular_file.parse_json): its limits, in a list and in a line alike
_DEEP_RECORD = '{"prompt_tokens": 8, "extra": ' + "[" * 70 + "]" * 70 + "}"


@pytest.mark.parametrize("record,reason", [
    ('{"prompt_tokens": ' + "9" * 5000 + "}", "not JSON: a number of more than 4,300 digits"),
    (_DEEP_RECORD, "not JSON: nested more than 64 levels deep"),  # json.loads alone read it
    ('{"prompt_tokens": 8, "extra": ' + "[" * 5000 + "]" * 5000 + "}", "not JSON: nested more than 64 levels deep"),
])
def test_a_record_past_the_json_limits_is_named_with_its_line_and_limit(tmp_path, record, reason):
    path = _write(tmp_path, ['{"prompt_tokens": 8, "output_tokens": 4}', record])
    with pytest.raises(GsgError) as caught:
        load_dataset(path, 32, LIMITS)
    assert str(caught.value) == f"{path}:2: {reason}"  # was "not a JSON object; expected one record a line"


@pytest.mark.parametrize("depth", [70, 5000])
def test_a_json_list_nested_past_the_limit_is_named_with_the_limit(tmp_path, depth):
    path = tmp_path / "deep.json"
    path.write_text('[{"prompt_tokens": 8, "extra": ' + "[" * depth + "]" * depth + "}]", encoding="utf-8")
    with pytest.raises(GsgError) as caught:
        load_dataset(str(path), 32, LIMITS)
    assert str(caught.value) == f"{path}: not JSON: nested more than 64 levels deep"


def test_a_record_at_the_json_depth_limit_is_read(tmp_path):
    # the record object is level 1: 63 arrays inside it make 64 levels
    path = _write(tmp_path, ['{"prompt_tokens": 8, "output_tokens": 4, "extra": ' + "[" * 63 + "]" * 63 + "}"])
    assert load_dataset(path, 32, LIMITS).entries == [WorkloadEntry(8, 4)]
