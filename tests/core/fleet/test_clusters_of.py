"""place_all looks each spec's cluster up once per cluster name (issue 34, fourteenth round): the clusters must be
Fleet.cluster's own for every name, the unnamed and unknown ones included, in spec order."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gpustack_guard.core.fleet.model import Fleet
from gpustack_guard.core.stages.placement import _clusters_of


def _fleet(*names: str) -> Fleet:
    return Fleet.validate({"clusters": [{"name": n, "workers": []} for n in names]})


def _specs(*names):
    return [SimpleNamespace(spec=SimpleNamespace(cluster_name=n)) for n in names]


NAMES = ["a", None, "b", "a", "missing", None, "b", "missing", "a"]


@pytest.mark.parametrize("clusters", [("a",), ("a", "b"), ("b", "a", "c"), ()])
def test_each_spec_gets_fleet_cluster_of_its_name(clusters):
    fleet = _fleet(*clusters)
    specs = _specs(*NAMES)
    assert _clusters_of(specs, fleet) == [fleet.cluster(s.spec.cluster_name) for s in specs]


def test_each_name_is_looked_up_once():
    fleet = _fleet("a", "b")
    asked = []
    real = fleet.cluster

    class Counting:
        def cluster(self, name):
            asked.append(name)
            return real(name)
    _clusters_of(_specs(*NAMES), Counting())  # type: ignore[arg-type]
    assert sorted(asked, key=str) == sorted(set(NAMES), key=str)
