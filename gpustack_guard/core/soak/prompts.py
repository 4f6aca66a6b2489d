"""Deterministic prompts of a requested token length, the same for our endpoint and the reference.

Words are drawn from a small vocabulary of common English words that tokenize to one token each in the
usual BPE vocabularies (Llama, Qwen, GPT), so N words is close to N prompt tokens. A per-prompt nonce at
the start defeats prefix caching across requests, which would otherwise turn a soak into a cache test.
"""

from __future__ import annotations

import random

from gpustack_guard.core.values import frozen_value

_VOCABULARY = ["the", "of", "and", "to", "in", "is", "was", "for", "on", "that", "with", "as", "by", "at", "from", "his", "her", "they", "which", "this", "be", "are", "or", "had", "an", "not", "but", "what", "all", "were", "when", "we", "there", "can", "more", "if", "no", "out", "so", "said", "who", "one", "about", "up", "them", "time", "has", "into", "only", "other", "new", "some", "could", "these", "two", "may", "first", "then", "do", "any", "like", "my", "now", "over", "such", "our", "man", "me", "even", "most", "made", "after", "also", "did", "many", "before", "must", "through", "back", "years", "where", "much", "your", "way", "well", "down", "should", "because", "each", "just", "those", "people", "how", "too", "little", "state", "good", "very", "make", "world", "still", "own", "see", "men", "work", "long", "get", "here", "between", "both", "life", "being", "under", "never", "day", "same", "another", "know", "while", "last", "might", "us", "great", "old", "year", "off", "come", "since", "against", "go", "came", "right", "used", "take", "three"]


# A generated prompt is built in memory, a word a token: past about a million tokens (longer than any context
# window) a length is a mistake or a hostile file, and building it would exhaust memory. Every source of a length
# checks it (--prompt-tokens, --workload, --dataset).
MAX_PROMPT_TOKENS = 1 << 20


def prompt_length_problem(tokens: int) -> str | None:
    """Why a requested prompt length cannot be generated, or None."""
    if not 1 <= tokens <= MAX_PROMPT_TOKENS:
        return f"a prompt length must be between 1 and {MAX_PROMPT_TOKENS:,} tokens, not {_shown(tokens)}"
    return None


def _shown(tokens: int) -> str:
    return f"{tokens:,}" if abs(tokens) < 10**15 else f"a {len(str(abs(tokens))):,}-digit number"


@frozen_value(eq=True, repr=True)
class Prompt:
    index: int
    text: str
    prompt_tokens: int  # the requested length (approximate on the server side)
    max_tokens: int


def make_prompt(seed: int, index: int, prompt_tokens: int, max_tokens: int) -> Prompt:
    rng = random.Random(seed * 1_000_003 + index)
    nonce = f"Request {seed}-{index}."  # about 6 tokens; counted in the length
    words = rng.choices(_VOCABULARY, k=max(prompt_tokens - 6, 1))  # one call: an 8k-token prompt in ~0.6 ms
    text = f"{nonce} {' '.join(words)}"
    return Prompt(index, text, prompt_tokens, max_tokens)


@frozen_value(eq=True, repr=True)
class WorkloadEntry:
    prompt_tokens: int  # with `text`: an estimate, for the report
    max_tokens: int
    weight: float = 1.0
    text: str | None = None  # a dataset's own prompt, sent as it is (after the nonce)


def prompt_for(seed: int, index: int, workload: list[WorkloadEntry], uniform: bool = False) -> Prompt:
    """The index-th prompt of a run: the workload entry is drawn by weight (or, `uniform`, with equal
    chances: a dataset of 100,000 records is not weighed on every request), seeded by (seed, index)."""
    if not workload:
        raise ValueError("an empty workload")
    entry = workload[0]
    if len(workload) > 1:
        rng = random.Random(seed * 7_919 + index)
        entry = workload[rng.randrange(len(workload))] if uniform else \
            rng.choices(workload, [w.weight for w in workload])[0]
    if entry.text is not None:
        # the nonce first, as for generated prompts: a replayed prompt must not hit the prefix cache of its
        # previous replay
        return Prompt(index, f"Request {seed}-{index}. {entry.text}", entry.prompt_tokens, entry.max_tokens)
    return make_prompt(seed, index, entry.prompt_tokens, entry.max_tokens)
