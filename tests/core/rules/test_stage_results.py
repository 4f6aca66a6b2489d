"""The stage results the rules read are values: booking or adding a footprint returns a new ledger; results
cannot be changed."""

import dataclasses

import pytest
from rule_inputs import FLEET_1, OK, run_stages

from gpustack_guard.core.fleet.placement import Ledger, Placement


def test_booking_returns_a_new_ledger_and_keeps_the_old_one():
    cluster = FLEET_1.clusters[0]
    empty = Ledger.empty(cluster, set())
    gpu = empty.gpus["w1:cuda:0"]
    booked = empty.booked(Placement(((gpu,),), manual=True, fraction=0.5, booking={"w1:cuda:0": 1000}))
    assert empty.bookings["w1:cuda:0"] == 0 and booked.bookings["w1:cuda:0"] == 1000
    with_footprint = booked.with_footprints([("w1:cuda:0", "a", 7)])
    assert booked.footprints["w1:cuda:0"] == () and with_footprint.footprints["w1:cuda:0"] == (("a", 7),)
    assert with_footprint.base is empty.base  # the cluster's own state is computed once


def test_stage_results_are_frozen():
    results = run_stages(OK, fleet=FLEET_1).results
    evaluation = results.evaluations[0]
    for value, field in ((results, "evaluations"), (evaluation, "estimates"), (evaluation.placed, "placement"),
                         (evaluation.placement, "replicas"), (evaluation.rendered, "args"),
                         (evaluation.rendered.doc, "spec")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, field, None)
    assert isinstance(evaluation.rendered.args, tuple) and isinstance(evaluation.placement.replicas, tuple)


@pytest.mark.parametrize("count", [0, 1, 2, 3])
def test_an_evaluations_stored_reads_equal_its_properties(count):
    """Evaluation stores rendered, cluster, placement and (for up to one replica) estimate at construction
    (docs/performance.md, twelfth round): each equals what its property computes from the placed spec."""
    from gpustack_guard.core.stages.results import Evaluation

    first = run_stages(OK, fleet=FLEET_1).results.evaluations[0]
    base = first.estimates[0]
    estimates = tuple(dataclasses.replace(base, verdict="fits", kv_available=base.kv_available - i * 7 % 3)
                      for i in range(count))
    evaluation = Evaluation(first.placed, estimates)
    for name in ("rendered", "cluster", "placement", "estimate"):
        prop = getattr(Evaluation, name)
        assert getattr(evaluation, name) is prop.func(evaluation), name
    assert evaluation.rendered is first.placed.rendered and evaluation.placement is first.placed.placement
