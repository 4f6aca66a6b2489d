"""--dataset FILE: replay recorded prompts instead of generated ones.

Read as the load tools operators compare gsg with read theirs, one record per line (JSONL) or one JSON list:
- lengths only, `{"prompt_tokens": 812, "output_tokens": 128}` (GuideLLM's `prompt_tokens_count` /
  `output_tokens_count` too): a generated prompt of that length, as with --workload;
- a prompt, `{"prompt": "...", "output_tokens": 128}` (`text` or `input` as GuideLLM's default columns; no
  output length: --max-tokens), as vllm bench serve's custom dataset;
- a ShareGPT conversation, `{"conversations": [{"from": "human", "value": "..."}, {"from": "gpt", "value":
  "..."}]}` (or role/content turns): the first turn is the prompt, the reply's length the output length;
  a conversation without a reply is skipped, as vllm bench serve skips it.
Lengths of text are estimated at CHARS_PER_TOKEN characters a token: gsg has no tokenizer for the model.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from gpustack_guard.adapters.files.regular_file import NotJson, TooLarge, Unreadable, parse_json, read_regular
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.soak.load_model import SoakLimits
from gpustack_guard.core.soak.prompts import WorkloadEntry, prompt_length_problem

CHARS_PER_TOKEN = 4  # English text in the usual BPE vocabularies (OpenAI's rule of thumb)
MAX_PROMPT_CHARS = 4 * 1024 * 1024  # one record's prompt: about a million tokens, past any context window
TEXT_KEYS = ("prompt", "text", "input")
PROMPT_LENGTH_KEYS = ("prompt_tokens", "prompt_tokens_count")
OUTPUT_LENGTH_KEYS = ("output_tokens", "max_tokens", "output_tokens_count")
ASKING_ROLES = ("human", "user")
ANSWERING_ROLES = ("gpt", "assistant", "chatgpt", "bard", "bing")
EXAMPLE = '{"prompt_tokens": 812, "output_tokens": 128}, {"prompt": "...", "output_tokens": 128} or ShareGPT ' \
          '{"conversations": [...]}'


@dataclass
class Dataset:
    path: str
    entries: list[WorkloadEntry]
    skipped: int  # conversations without a prompt and a reply


def estimate_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


def _length(record: dict, keys: tuple[str, ...]) -> int | None:
    """The first of `keys` present, a whole number >= 1; ValueError otherwise."""
    for key in keys:
        if key in record:
            value = record[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{key} must be a whole number >= 1, not {json.dumps(value)[:40]}")
            if key in PROMPT_LENGTH_KEYS and prompt_length_problem(value):
                raise ValueError(f"{key}: {prompt_length_problem(value)}")
            return value
    return None


def _turn(turn: object) -> tuple[str, str] | None:
    if not isinstance(turn, dict):
        return None
    role = turn.get("from", turn.get("role"))
    text = turn.get("value", turn.get("content"))
    if not isinstance(role, str) or not isinstance(text, str):
        return None
    return role.lower(), text


def _checked_text(text: str) -> str:
    if len(text) > MAX_PROMPT_CHARS:
        raise ValueError(f"a prompt of {len(text):,} characters (at most {MAX_PROMPT_CHARS:,})")
    return text


def record_entry(record: object, default_output: int) -> WorkloadEntry | None:
    """One record as a request shape; None for a conversation to skip; ValueError says what is wrong."""
    if not isinstance(record, dict):
        raise ValueError(f"not a JSON object; expected {EXAMPLE}")
    output = _length(record, OUTPUT_LENGTH_KEYS)
    if "conversations" in record or "messages" in record:
        turns = record.get("conversations", record.get("messages"))
        if not isinstance(turns, list):
            raise ValueError("conversations must be a list of {from, value} turns")
        parsed = [_turn(t) for t in turns]
        if len(parsed) < 2 or parsed[0] is None or parsed[1] is None or parsed[0][0] not in ASKING_ROLES \
                or parsed[1][0] not in ANSWERING_ROLES or not parsed[0][1].strip():
            return None
        prompt, reply = parsed[0][1], parsed[1][1]
        return WorkloadEntry(estimate_tokens(prompt), output or estimate_tokens(reply), text=_checked_text(prompt))
    for key in TEXT_KEYS:
        if key in record:
            text = record[key]
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"{key} must be a non-empty string")
            return WorkloadEntry(_length(record, PROMPT_LENGTH_KEYS) or estimate_tokens(text),
                                 output or default_output, text=_checked_text(text))
    prompt_tokens = _length(record, PROMPT_LENGTH_KEYS)
    if prompt_tokens is None:
        raise ValueError(f"no prompt, prompt_tokens or conversations; expected {EXAMPLE}")
    return WorkloadEntry(prompt_tokens, output or default_output)


def _records(path: str, text: str) -> list[tuple[str, object]]:
    """(where, record) of each record: one JSON list, or one JSON value a line; read as every JSON file gsg
    reads (parse_json: its depth and digit limits, one line for each)."""
    if text.lstrip().startswith("["):  # one JSON list (ShareGPT's own files)
        try:
            records = parse_json(text, path)
        except NotJson as exc:
            raise GsgError(f"not JSON: {exc.reason}", where=path if exc.line is None else f"{path}:{exc.line}") \
                from None
        return [(f"{path} record {n}", record) for n, record in enumerate(records, 1)]
    numbered = []
    # only '\n' ends a record: str.splitlines() also splits at U+2028, U+0085 and form feeds, which JSON strings
    # may hold as they are
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            numbered.append((where, parse_json(line, where)))
        except NotJson as exc:
            # a line past the depth or digit limits says which limit, not "not a JSON object"
            problem = f"not JSON: {exc.reason}" if exc.line is None else \
                f"not a JSON object; expected one record a line, e.g. {EXAMPLE}"
            raise GsgError(problem, where=where) from None
    return numbered


def load_dataset(path: str, default_output: int, limits: SoakLimits) -> Dataset:
    try:  # a regular file within the size limit, checked on the open file and while reading (it may grow)
        data = read_regular(path, limits.max_dataset_bytes)
    except Unreadable as exc:
        raise GsgError(str(exc), where=path) from None
    except TooLarge as exc:
        raise GsgError(f"{exc.size:,} bytes, over the {limits.max_dataset_bytes:,} a dataset may have "
                       "(GSG_SOAK_MAX_DATASET_BYTES)", where=path) from None
    try:
        text = data.decode("utf-8-sig")  # a byte order mark (Windows editors) is no part of the first record
    except UnicodeDecodeError as exc:
        raise GsgError(f"not UTF-8 text (byte {exc.start})", where=path) from None
    numbered = _records(path, text)
    if len(numbered) > limits.max_dataset_entries:
        raise GsgError(f"{len(numbered):,} records, over the {limits.max_dataset_entries:,} a dataset may have "
                       "(GSG_SOAK_MAX_DATASET_ENTRIES)", where=path)
    entries, skipped = [], 0
    for where, record in numbered:
        try:
            entry = record_entry(record, default_output)
        except ValueError as exc:
            raise GsgError(str(exc), where=where) from None
        if entry is None:
            skipped += 1
        else:
            entries.append(entry)
    if not entries:
        raise GsgError(f"no usable record ({skipped} conversation(s) without a prompt and a reply); expected "
                       f"{EXAMPLE}", where=path)
    return Dataset(path, entries, skipped)
