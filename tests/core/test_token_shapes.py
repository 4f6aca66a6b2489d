"""Tokens masked by their shape alone (core/secrets.TOKEN_SHAPES): pasted where no name says "secret", they are
masked in every text scrub sees; near misses (too short, inside a longer word, digests, ids, names) stay."""

from __future__ import annotations

import time

import pytest

from gpustack_guard.core.secrets import MASK, scrub, token_spans

# Built from parts: a literal token in a source file would trip secret scanners on a push.
R36 = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
TOKENS = {
    "huggingface": "hf" + "_" + R36[:34],
    "openai-legacy": "sk" + "-" + R36 + "AbCdEfGhIjKl",
    "openai-project": "sk" + "-proj-" + R36 + "_-" + R36 + "T3BlbkFJ" + R36,
    "github-classic": "gh" + "p_" + R36,
    "github-server": "gh" + "s_" + R36,
    "github-fine-grained": "github" + "_pat_" + "11ABCDEFG0" + R36[:12] + "_" + R36 + R36[:23],
    "slack": "xo" + "xb-" + "123456789012-1234567890123-" + R36[:24],
    "aws-long-term": "AK" + "IA" + "IOSFODNN7EXAMPLE",
    "aws-temporary": "AS" + "IA" + "0123456789ABCDEF",
    "jwt": "ey" + "JhbGciOiJIUzI1NiJ9.ey" + "JzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}
BEARER = "Bearer " + R36[:20]


@pytest.mark.parametrize("name", TOKENS)
@pytest.mark.parametrize("around", ["{}", "--max-model-len={}", "'{}'", '"{}"', "x {} y", "label: {}\n", "/{}/"])
def test_each_shape_is_masked_wherever_it_is_pasted(name, around):
    assert scrub(around.format(TOKENS[name]), []) == around.format(MASK)


def test_a_bearer_token_is_masked_and_the_word_stays():
    assert scrub(f"Authorization: {BEARER}", []) == f"Authorization: Bearer {MASK}"
    assert scrub(f'{{"authorization": "bearer {R36}"}}', []) == f'{{"authorization": "bearer {MASK}"}}'
    assert scrub(f"echo: Bearer {R36[:18]}... (truncated)", []) == f"echo: Bearer {MASK}... (truncated)"


NEAR_MISSES = [
    "meta-llama/Llama-3.1-8B-Instruct",
    "someone/sk-Llama-3.1-8B-Instruct-GGUF-Quantized",  # sk- and a hyphenated name
    "task-" + R36 + R36,  # sk- inside a word
    "disk-" + R36,
    "x" + TOKENS["huggingface"],  # inside a longer word
    "my_" + TOKENS["github-classic"],
    "-" + TOKENS["openai-legacy"],
    TOKENS["aws-long-term"] + "X",
    "X" + TOKENS["aws-long-term"],
    "hf" + "_" + R36[:29],  # too short
    "gh" + "p_" + R36[:35],
    "AK" + "IA" + "IOSFODNN7EXAMP",
    "sk" + "-" + R36[:31],
    "sk" + "-" + "0123456789abcdef" * 4,  # hex, one case: not a random key
    "sha256:" + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "123e4567-e89b-12d3-a456-426614174000",
    "NVIDIA GeForce RTX 4090", "NVIDIA H100 80GB HBM3", "gpu-c:cuda:0",
    "/var/lib/gpustack/cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/abc",
    "hf_hub_download", "HF_TOKEN", "--hf-token", "--max-num-batched-tokens",
    "xo" + "xb-token-goes-here",  # no digit: prose
    "Bearer authentication-required-here", "Bearer <token>", "Bearer ********", "Bearer short123",
    "ey" + "Jhbg.ey" + "Jzdw.sig",  # too short for a JWT
    "sk" + "-learning-rate...", "hf" + "_abcdefgh...", "see hf" + "_hub_download...",  # cut words, not token heads
]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_stay(text):
    assert scrub(text, []) == text


@pytest.mark.parametrize("cut", ["{}\u2026", "{}...", '"{}\\u2026"'])
@pytest.mark.parametrize("name", TOKENS)
def test_a_token_cut_short_by_an_echo_is_masked(name, cut):
    # gsg's messages cut a value at 40 characters (JSON writes the '…' as \u2026), servers cut echoes
    head = TOKENS[name][:30]  # past the prefix by 9 or more (into the JWT's payload)
    assert scrub("x " + cut.format(head), []) == "x " + cut.format(MASK)


def test_a_shape_and_a_known_secret_overlapping_are_one_mask():
    token = TOKENS["huggingface"]
    assert scrub(f"a {token} b", [token[:20]]) == f"a {MASK} b"
    assert scrub(f"a {token} b secret-value-42 c", ["secret-value-42"]) == f"a {MASK} b {MASK} c"


def test_shapes_off_leaves_them_and_still_masks_known_secrets():
    token = TOKENS["github-classic"]
    assert scrub(f"{token} secret-value-42", ["secret-value-42"], shapes=False) == f"{token} {MASK}"


@pytest.mark.parametrize("name", ["huggingface", "github-classic", "github-server", "github-fine-grained",
                                  "aws-long-term", "aws-temporary"])
@pytest.mark.parametrize("before", ["svc-", "--", "a-b-"])
def test_a_token_whose_body_holds_no_hyphen_is_masked_after_one(name, before):
    # a spec or deployment name such as svc-<token>: the hyphen is a separator there, not part of a word
    assert scrub(before + TOKENS[name] + " x", []) == before + MASK + " x"


@pytest.mark.parametrize("text", ["x-" + TOKENS["slack"], "a-" + TOKENS["jwt"], "run-" + TOKENS["openai-legacy"],
                                  "x-" + TOKENS["huggingface"][:14] + "..."])
def test_the_shapes_that_can_hold_a_hyphen_still_want_none_before_them(text):
    assert scrub(text, []) == text


@pytest.mark.parametrize("unit", ["hf" + "_", "sk" + "-", "sk" + "-proj-", "a-", "ey" + "Jaaaaaaaaaaaa.ey" + "J",
                                  "xo" + "xb-1", "Bearer ", "bearer a", "AK" + "IA", "gh" + "p_", "github" + "_pat_",
                                  "-hf" + "_" + "a" * 29, "-AK" + "IA" + "A" * 15, "-ey" + "Jaaaaaaaaaaaa"])
def test_the_search_is_linear_in_the_text(unit):
    # a run of near-starts of one shape: a search that backtracked over the run from each start would be quadratic
    # CPU time, best of three: other processes on a shared machine neither add to it nor make one run an outlier
    def timed(repeats: int) -> float:
        text = unit * repeats
        spent = []
        for _ in range(3):
            started = time.process_time()
            token_spans(text)
            spent.append(time.process_time() - started)
        return min(spent)

    small, large = timed(20_000), timed(160_000)
    assert large < 8 * 3 * small + 0.05, f"{small:.3f} s for 20,000, {large:.3f} s for 160,000"
