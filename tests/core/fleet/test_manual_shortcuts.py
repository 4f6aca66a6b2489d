"""Manual placement's shortcuts (issue 34, fourteenth round) against the long way: the chosen GPUs of one listed id,
and assign_replicas' one-id case, over every layout of up to three ids (repeats included) on two workers."""

from __future__ import annotations

import itertools

import pytest

from gpustack_guard.core.deploy import injection as I
from gpustack_guard.core.stages.placement import _chosen

IDS = ["w1:cuda:0", "w1:cuda:1", "w2:cuda:0"]
LAYOUTS = [list(ids) for n in (1, 2, 3) for ids in itertools.product(IDS, repeat=n)]


def _long_way(ids, assigned, by_id):
    replicas = tuple(tuple(by_id[gid] for gid in chosen) for chosen in assigned)
    used = {gid for chosen in assigned for gid in chosen}
    unused = tuple(gid for gid in ids if gid not in used)
    return replicas, unused, [g for gpus in replicas for g in gpus]


@pytest.mark.parametrize("ids", LAYOUTS, ids=["+".join(i) for i in LAYOUTS])
def test_chosen_gpus_equal_the_long_way_for_every_assignment(ids):
    by_id = {gid: object() for gid in IDS}
    for count, replicas in itertools.product((1, 2, 3), (1, 2, 3)):
        assigned = I.assign_replicas(ids, count, replicas)
        assert assigned == I.grouped_by_worker(ids, count, replicas)  # the one-id shortcut is the general rule's
        if assigned is not None:
            assert _chosen(ids, assigned, by_id) == _long_way(ids, assigned, by_id)
