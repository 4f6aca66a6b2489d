"""Secrets an engine prints in its own log in the shapes verify had let through: a secret flag and its value apart
(a command line, an argv list) and a GPUStack API key by its shape (gpustack_<16 hex>_<32 hex>)."""

import time

import pytest

from gpustack_guard.core.secrets import MASK, is_secret_value
from gpustack_guard.core.verify.logparse import mask_secrets

GPUSTACK_KEY = "gpustack_0123456789abcdef_0123456789abcdef0123456789abcdef"


@pytest.mark.parametrize("text, shown", [
    ("vllm serve /m --api-key abcsecret1 --port 8000", f"vllm serve /m --api-key {MASK} --port 8000"),
    ("args: ['--api-key', 'abcsecret1', '--max-model-len', '8192']",
     f"args: ['--api-key', '{MASK}', '--max-model-len', '8192']"),
    ('argv ["--hf-token", "plain-secret"]', f'argv ["--hf-token", "{MASK}"]'),
    (f"Authorization key {GPUSTACK_KEY} rejected", f"Authorization key {MASK} rejected"),
])
def test_secrets_in_these_shapes_are_masked(text, shown):
    found: set[str] = set()
    assert mask_secrets(text, found) == shown
    assert found and all(secret not in shown for secret in found)


@pytest.mark.parametrize("text", [
    "--max-num-batched-tokens 8192 --tokenizer Qwen/Qwen3-8B",  # token-ish words that are not secrets
    "--api-key --port 8000",  # a flag with no value: the next flag is not its value
    "--api-key none",
    "cookie gpustack_session=eyJ",  # not a key's shape
    "gpustack_0123_abcd",
])
def test_what_is_not_a_secret_stays(text):
    assert mask_secrets(text) == text


def test_the_gpustack_key_shape_is_a_secret_value():
    assert is_secret_value(GPUSTACK_KEY) and not is_secret_value("gpustack_worker_1")


def test_a_long_run_of_flag_characters_is_read_in_linear_time():
    text = "--" + "a-" * 16_000
    started = time.process_time()
    assert mask_secrets(text) == text
    assert time.process_time() - started < 3.0
