"""The KV demand of declared traffic, the one rule GSG033 and gsg advise share: longest requests first, each
stream up to its peak, and the most seats whose worst case fits."""

import pytest

from gpustack_guard.core.memory.demand import Stream, declared_peak, peak_kv_tokens, seats_fitting, streams_of
from gpustack_guard.core.spec.model import Workload

CHAT, BATCH = Stream("chat", 3_500, 48), Stream("batch", 32_500, 2)


def test_one_stream_without_a_peak_is_seats_times_its_length():
    assert peak_kv_tokens([Stream("w", 8_192)], 256) == 2_097_152
    assert seats_fitting([Stream("w", 8_192)], 217_200, 256) == 26  # 26 x 8,192 = 212,992; 27 would be 221,184


def test_a_mix_is_priced_longest_first_each_stream_up_to_its_peak():
    assert peak_kv_tokens([CHAT, BATCH], 50) == 2 * 32_500 + 48 * 3_500 == 233_000
    assert peak_kv_tokens([CHAT, BATCH], 10) == 2 * 32_500 + 8 * 3_500 == 93_000
    assert peak_kv_tokens([CHAT, BATCH], 1) == 32_500
    assert peak_kv_tokens([CHAT, BATCH], 64) == 233_000  # seats beyond every peak stay empty


@pytest.mark.parametrize("capacity, most, seats", [
    (233_000, 50, 50),  # exactly the peak
    (232_999, 50, 49),  # one token short: the last chat request does not fit
    (251_040, 50, 50),
    (64_999, 50, 1),  # the second batch document does not fit
    (32_499, 50, 0),  # not even one batch document
    (100_000, 20, 12),  # 65,000 + 10 x 3,500 = 100,000
    (251_040, 20, 20),  # capped by `most`
])
def test_seats_fitting_is_the_inverse_of_the_peak(capacity, most, seats):
    assert seats_fitting([CHAT, BATCH], capacity, most) == seats
    assert peak_kv_tokens([CHAT, BATCH], seats) <= capacity
    if seats < most and seats < 50:
        assert peak_kv_tokens([CHAT, BATCH], seats + 1) > capacity


def test_streams_come_from_the_guard_workload():
    mixed = Workload.validate({"prompt_tokens_p99": 31_000, "max_output_tokens": 1_500, "concurrency": 50, "mix": [
        {"name": "chat", "prompt_tokens_p99": 2_500, "max_output_tokens": 1_000, "concurrency": 48},
        {"name": "batch", "prompt_tokens_p99": 31_000, "max_output_tokens": 1_500, "concurrency": 2}]})
    streams, basis = streams_of(mixed, 32_512)
    assert streams == (CHAT, BATCH) and declared_peak(streams) == 50
    assert basis == "workload mix at p99, longest first: 2 x 32,500 (batch) + 48 x 3,500 (chat)"
    single = Workload.validate({"prompt_tokens_p99": 11_000, "max_output_tokens": 2_048})
    assert streams_of(single, 16_384) == ((Stream("workload", 13_048),), "workload p99 prompt + output = 13,048")
    assert streams_of(Workload(), 16_384) == ((Stream("max_model_len", 16_384),), "max_model_len 16,384")
    assert declared_peak(streams_of(single, 1)[0]) is None
