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
