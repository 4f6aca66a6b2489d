"""GPUStack's booked fraction is memoised per distinct input (engine._gpustack_fraction, issue 34 tenth round):
placement asks once a spec, and a spec differing from an earlier one in any input gets its own answer."""

from __future__ import annotations

import pytest

from gpustack_guard.core import engine_flags as EF
from gpustack_guard.core.memory import engine
from gpustack_guard.core.units import MiB

L40S = 46068 * MiB
BASE = {"family": "sglang", "flags": {}, "gpu_total": L40S, "version": "0.5.5"}


def fraction(**changed):
    return engine.gpustack_fraction(**(BASE | changed))


def long_way(**changed):
    given = BASE | changed
    return engine._gpustack_fraction.__wrapped__(given["family"], tuple(given["flags"].items()), given["gpu_total"],
                                                 given["version"])


def test_the_base_answer_is_sglangs_own_and_kept():
    engine._gpustack_fraction.cache_clear()
    assert fraction() == 0.851
    assert fraction(flags={}) == 0.851 and engine._gpustack_fraction.cache_info().hits == 1


@pytest.mark.parametrize("changed, expected", [
    ({"family": "vllm", "version": "0.11.0"}, 0.9),
    ({"family": "llamacpp", "version": None}, 0.0),
    ({"flags": {"mem-fraction-static": "0.4"}}, 0.4),
    ({"flags": {"chunked-prefill-size": "2048"}}, 0.918),
    ({"gpu_total": 24564 * MiB}, 0.847),
    ({"gpu_total": 80 * 1024 * MiB}, 0.836),
    ({"version": "0.4.6"}, 0.88),
    ({"version": "0.5.10"}, 0.843),
    ({"family": "vllm", "version": "0.11.0", "flags": {"gpu-memory-utilization": "0.4"}}, 0.4),
])
def test_each_input_gets_its_own_answer_after_the_base_one_is_kept(changed, expected):
    fraction()  # the base answer kept first: a key leaving this input out would hand it back
    assert fraction(**changed) == long_way(**changed) == expected != 0.851


def test_a_refused_value_is_refused_every_time():
    for _ in range(2):
        with pytest.raises(EF.FlagValueError):
            fraction(family="vllm", version="0.11.0", flags={"gpu-memory-utilization": "1.7"})
