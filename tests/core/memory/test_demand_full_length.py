"""demand.full_length_capacity: what max_model_len-long sequences can hold, from the engine's max concurrency."""

import pytest

from gpustack_guard.core.memory import demand


@pytest.mark.parametrize("tokens,concurrency,max_len,expected", [
    (125_984, 9.58, 32_768, 313_917),   # Gemma 3 (5 window layers to 1 full): 9.58 sequences, not 3.8
    (68_992, 7.87, 32_768, 257_884),    # Qwen3.6-27B (3 Gated DeltaNet layers to 1 full)
    (131_072, 3.99, 32_768, 131_072),   # every layer caches every token: block rounding leaves the token count
    (131_072, None, 32_768, 131_072),   # no concurrency known (a log without the line)
    (131_072, float("nan"), 32_768, 131_072),
    (131_072, 0.0, 32_768, 131_072),
    (131_072, -2.0, 32_768, 131_072),
])
def test_full_length_capacity(tokens, concurrency, max_len, expected):
    assert demand.full_length_capacity(tokens, concurrency, max_len) == expected


def test_the_classic_count_follows_it():
    streams, _ = demand.streams_of(_Undeclared(), 32_768)
    capacity = demand.full_length_capacity(125_984, 9.58, 32_768)
    assert demand.seats_fitting(streams, capacity, 256) == 9
    assert demand.seats_fitting(streams, 125_984, 256) == 3


class _Undeclared:
    mix = ()
    prompt_tokens_p99 = None
    max_output_tokens = None


def test_declared():
    assert not demand.declared(_Undeclared())
    busy = _Undeclared()
    busy.max_output_tokens = 512
    assert demand.declared(busy)
