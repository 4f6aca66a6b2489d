from __future__ import annotations

import pytest

from gpustack_guard.core.soak.prompts import WorkloadEntry, make_prompt, prompt_for
from gpustack_guard.core.soak.stats import median, percentile, rising_pair_fraction, theil_sen_slope


def test_percentile_interpolates_between_ranks():
    values = [5.0, 1.0, 4.0, 2.0, 3.0]
    assert percentile(values, 50) == 3.0
    assert percentile(values, 95) == pytest.approx(4.8)
    assert percentile(values, 0) == 1.0 and percentile(values, 100) == 5.0
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 50) is None
    assert median([1.0, 2.0, 3.0, 10.0]) == 2.5


def test_theil_sen_ignores_one_outlying_round():
    xs = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    ys = [10.0, 12.0, 14.0, 100.0, 18.0, 20.0]  # slope 2 with one spike
    assert theil_sen_slope(xs, ys) == 2.0
    assert theil_sen_slope([0.0], [1.0]) is None


def test_rising_pair_fraction():
    assert rising_pair_fraction([1.0, 2.0, 3.0, 4.0]) == 1.0
    assert rising_pair_fraction([4.0, 3.0, 2.0, 1.0]) == 0.0
    assert rising_pair_fraction([1.0, 1.0]) == 0.5
    assert rising_pair_fraction([1.0, 3.0, 2.0]) == pytest.approx(2 / 3)
    assert rising_pair_fraction([1.0]) is None


def test_prompts_are_seeded_and_of_the_requested_word_count():
    a, b = make_prompt(7, 3, 200, 64), make_prompt(7, 3, 200, 64)
    assert a == b
    # the nonce "Request 7-3." is 2 words but about 6 tokens; every other word is one token
    assert len(a.text.split()) == 2 + (200 - 6)
    assert make_prompt(8, 3, 200, 64).text != a.text
    assert make_prompt(7, 4, 200, 64).text.split()[:2] == ["Request", "7-4."]  # a fresh prefix per request


def test_workload_entries_drawn_by_weight_and_seed():
    workload = [WorkloadEntry(100, 10, 3.0), WorkloadEntry(4000, 200, 1.0)]
    shapes = [prompt_for(1, i, workload).prompt_tokens for i in range(400)]
    assert shapes == [prompt_for(1, i, workload).prompt_tokens for i in range(400)]
    assert 250 < shapes.count(100) < 350
    with pytest.raises(ValueError):
        prompt_for(1, 0, [])
