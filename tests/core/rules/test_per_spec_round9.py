"""Round nine's shortcut (issue 34): GSG033 decides a spec without guard.workload before building its stream."""

import itertools

from gpustack_guard.core.memory import demand
from gpustack_guard.core.rules.memory import _classic_fits
from gpustack_guard.core.spec.model import Workload


def test_classic_fits_is_the_long_way_for_a_spec_without_workload():
    compared = 0
    for seqs, max_len, capacity in itertools.product((-1, 0, 1, 2, 16, 256), (0, 1, 2048, 8192, 131_072),
                                                      (0, 1, 8191, 8192, 131_072, 2_097_152, 10**9)):
        streams, _ = demand.streams_of(Workload(), max_len)
        needed = demand.peak_kv_tokens(streams, seqs)
        assert _classic_fits(seqs, max_len, capacity) is (not needed or needed <= capacity), (seqs, max_len, capacity)
        compared += 1
    assert compared == 210
