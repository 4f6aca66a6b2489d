"""The one-worker, one-replica shortcut of assign_replicas and the one-GPU shortcut of per_worker (issue 34, tenth
round) give what the general grouping gives, over every layout of up to four ids on up to three workers."""

from __future__ import annotations

import itertools

from gpustack_guard.core.deploy.injection import assign_replicas, grouped_by_worker, per_worker


def layouts():
    for n in range(1, 5):
        for workers in itertools.product("abc", repeat=n):
            yield [f"{w}:cuda:{i}" for i, w in enumerate(workers)]


def test_assign_replicas_matches_the_general_rule():
    seen = 0
    for ids in layouts():
        for count in range(0, 6):
            for replicas in (1, 2, 3):
                expected = grouped_by_worker(ids, count, replicas) if count else None
                if count:
                    assert assign_replicas(ids, count, replicas) == expected, (ids, count, replicas)
                    seen += 1
    assert seen == 120 * 5 * 3


def test_assign_replicas_exact_answers():
    assert assign_replicas(["a:cuda:3"], 1, 1) == [["a:cuda:3"]]
    assert assign_replicas(["a:cuda:3", "a:cuda:1", "a:cuda:0"], 2, 1) == [["a:cuda:3", "a:cuda:1"]]
    assert assign_replicas(["a:cuda:0", "b:cuda:0"], 2, 1) == [["a:cuda:0", "b:cuda:0"]]
    assert assign_replicas(["a:cuda:0"], 2, 1) is None


def test_per_worker_matches_counting():
    for ids in layouts():
        counts: dict[str, int] = {}
        for gid in ids:
            counts[gid.split(":")[0]] = counts.get(gid.split(":")[0], 0) + 1
        assert per_worker(ids) == tuple(sorted(counts.values(), reverse=True))
    assert per_worker(["node-1:cuda:0"]) == (1,)
