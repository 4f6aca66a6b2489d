"""GSG033's demand and message are kept per value of every input they are made of (issue 34, fourteenth round).
Each key part changed alone, after the base answer is kept, must give the long way's answer for the new value and
a different one from the base: a key part dropped from the memo would hand back the base answer and fail here."""

from __future__ import annotations

import pytest

from gpustack_guard.core.rules import memory as M
from gpustack_guard.core.spec.model import Workload, WorkloadShare

BASE = {"family": "vllm", "workload": Workload(), "seqs": 64, "max_model_len": 32_768, "capacity": 200_000,
        "kv_capacity_tokens": 200_000, "kv_cache": 10 * 2**30, "max_concurrency": 6.1}

NEIGHBOURS = {
    "family": "sglang",
    "workload": Workload(prompt_tokens_p99=16_000, max_output_tokens=4_000),
    "seqs": 65,
    "max_model_len": 32_769,
    "capacity": 150_000,
    "kv_capacity_tokens": 199_999,
    "kv_cache": 11 * 2**30,
    "max_concurrency": 6.2,
}
MIXES = [Workload(mix=[WorkloadShare(name="chat", prompt_tokens_p99=8_000, max_output_tokens=1_000, concurrency=c)])
         for c in (30, 31)]


def _long_way(**values):
    return M._oversubscribed.__wrapped__(*values.values())


def test_every_key_part_is_a_parameter_this_test_changes():
    assert list(BASE) == list(M._oversubscribed.__wrapped__.__code__.co_varnames[:8]) == list(NEIGHBOURS)


@pytest.mark.parametrize("part", list(NEIGHBOURS))
def test_each_key_part_changed_alone_gets_its_own_answer(part):
    M._oversubscribed.cache_clear()
    base = M._oversubscribed(*BASE.values())
    assert base == _long_way(**BASE) and base is not None
    changed = {**BASE, part: NEIGHBOURS[part]}
    answer = M._oversubscribed(*changed.values())
    assert answer == _long_way(**changed)
    assert answer != base


def test_workload_mixes_differing_in_one_peak_are_two_keys():
    M._oversubscribed.cache_clear()
    first, second = ({**BASE, "workload": mix} for mix in MIXES)
    assert M._oversubscribed(*first.values()) == _long_way(**first)
    assert M._oversubscribed(*second.values()) == _long_way(**second) != _long_way(**first)


def test_an_int_and_an_equal_float_are_two_keys():
    M._oversubscribed.cache_clear()
    whole = {**BASE, "max_concurrency": 6}
    M._oversubscribed(*whole.values())
    as_float = {**BASE, "max_concurrency": 6.0}
    assert M._oversubscribed(*as_float.values()) == _long_way(**as_float)
    assert M._oversubscribed.cache_info().currsize == 2


def test_a_demand_that_fits_is_kept_as_none_and_the_memo_is_capped():
    M._oversubscribed.cache_clear()
    roomy = {**BASE, "capacity": 64 * 32_768}
    assert M._oversubscribed(*roomy.values()) is None is _long_way(**roomy)
    for seqs in range(M.MAX_DEMANDS_KEPT + 5):
        M._oversubscribed(*{**BASE, "seqs": seqs}.values())
    assert M._oversubscribed.cache_info().currsize == M.MAX_DEMANDS_KEPT
