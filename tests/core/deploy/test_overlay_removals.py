"""Plan and drift with a context overlay's `$patch: delete` and `$patch: exclude`: the ownership rules of prune
hold for a delete the overlay asks for, and an excluded name is nobody's business in that context."""

import pytest

from gpustack_guard.core.deploy.drift import drift_report
from gpustack_guard.core.deploy.plan import CONFLICT, DELETE, LEGACY_OWNED, plan
from gpustack_guard.core.deploy.removals import OverlayRemovals
from gpustack_guard.core.fleet.model import Fleet
from gpustack_guard.core.ownership import Claims

WHERE = "specs/overlays/prod/gone.yaml:1"
ASKED = f"overlay 'prod' deletes it ({WHERE})"
CLUSTERS = {1: "prod"}


def _model(model_id: int, name: str, project: str | None = None, *, gsg: bool = True, tool: str | None = None,
           spec: str = "m.yaml") -> dict:
    meta: dict = {}
    if tool:
        meta = {"gsg.dev/managed-by": tool}
    elif gsg:
        meta = {"gsg.dev/managed-by": "gsg/0.1.0", "gsg.dev/spec": spec}
        if project:
            meta["gsg.dev/project"] = project
    return {"id": model_id, "name": name, "cluster_id": 1, "meta": meta, "replicas": 1, "ready_replicas": 1}


def _plan(live, *, project="team-a", prune=False, deleted=("m",), excluded=()):
    removals = OverlayRemovals("prod", {n: WHERE for n in excluded}, {n: WHERE for n in deleted})
    return [(c.action, c.name, c.reason, c.deleted_by) for c in
            plan([], live, CLUSTERS, claims=Claims(project), prune=prune, removals=removals)]


@pytest.mark.parametrize("prune", [False, True])
def test_an_overlay_delete_of_this_projects_model_is_a_delete_with_or_without_prune(prune):
    assert _plan([_model(7, "m", "team-a")], prune=prune) == [(DELETE, "m", ASKED, WHERE)]


@pytest.mark.parametrize("live, why", [
    (_model(7, "m", "team-b"), "project 'team-b' owns it"),
    (_model(7, "m", None), "it carries a legacy gsg marker without a project"),
    (_model(7, "m", gsg=False), "it is not managed by gsg"),
    (_model(7, "m", tool="argocd"), "it is not managed by gsg (managed by 'argocd')"),
])
def test_an_overlay_never_deletes_a_model_this_project_does_not_own(live, why):
    assert _plan([live]) == [(CONFLICT, "m", f"{ASKED}, but {why}: gsg deletes only models of project 'team-a'",
                              None)]


def test_without_a_project_an_overlay_delete_is_a_conflict_that_says_why():
    [(action, name, reason, by)] = _plan([_model(7, "m", "team-a")], project=None)
    assert (action, name, by) == (CONFLICT, "m", None)
    assert reason == (f"{ASKED}, but without a project identity gsg cannot tell it is this repository's model "
                      "(declare `project:` in gsg.yaml or pass --project)")


def test_two_live_models_of_the_deleted_name_are_one_conflict_and_no_delete():
    changes = _plan([_model(7, "m", "team-a"), _model(8, "m", "team-a")], prune=True)
    assert changes == [(CONFLICT, "m", f"{ASKED}, but the server lists 2 models of this name (ids 7, 8): gsg "
                        "cannot tell which one is meant and touches none", None)]


def test_a_deleted_name_that_is_not_live_plans_nothing_and_others_are_untouched():
    assert _plan([_model(9, "other", "team-a")]) == []  # no prune: the undeclared `other` stays
    assert _plan([_model(9, "other", "team-a")], prune=True) == [
        (DELETE, "other", "no spec of this project declares it", None)]


def test_an_excluded_name_is_never_pruned_listed_or_deleted():
    live = [_model(7, "m", "team-a"), _model(8, "legacy", None)]
    assert _plan(live, prune=True, deleted=(), excluded=("m", "legacy")) == []
    assert [a for a, *_ in _plan(live, prune=True, deleted=())] == [DELETE, LEGACY_OWNED]  # the near miss


def test_drift_reports_an_overlay_delete_as_out_of_sync_and_ignores_an_excluded_model():
    live = [_model(7, "m", "team-a"), _model(8, "kept", "team-a") | {"ready_replicas": 0}]
    removals = OverlayRemovals("prod", {"kept": WHERE}, {"m": WHERE})
    report = drift_report([], live, CLUSTERS, Fleet(clusters=[]), claims=Claims("team-a"), removals=removals)
    assert report["orphaned"] == [{"name": "m", "spec_file": "m.yaml", "note": ASKED}]
    assert report["sync"] == "OutOfSync"
    assert [o["name"] for o in report["owners"]] == ["m"]  # `kept` is not this context's
    assert report["unhealthy"] == []  # `kept` has no ready replica, but it is excluded here; `m` is going
    unscoped = drift_report([], live, CLUSTERS, Fleet(clusters=[]), claims=Claims("team-a"))
    assert [u["name"] for u in unscoped["unhealthy"]] == ["kept"]  # the near miss: without the overlay it counts


class _CountingRemovals(OverlayRemovals):
    """OverlayRemovals that counts how often the live list is filtered."""

    def managed(self, models):
        object.__setattr__(self, "calls", getattr(self, "calls", 0) + 1)
        return super().managed(models)


@pytest.mark.parametrize("report", [
    lambda live, removals: drift_report([], live, CLUSTERS, Fleet(clusters=[]), claims=Claims("team-a"),
                                        whole_project=True, removals=removals),
    lambda live, removals: plan([], live, CLUSTERS, claims=Claims("team-a"), prune=True, removals=removals),
], ids=["drift", "plan"])
def test_drift_and_plan_filter_the_overlays_exclusions_once(report):
    removals = _CountingRemovals("prod", {"kept": WHERE}, {"m": WHERE})
    report([_model(7, "m", "team-a"), _model(8, "kept", "team-a")], removals)
    assert removals.calls == 1
