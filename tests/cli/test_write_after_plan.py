"""Between the plan and each write the live model is read again and compared with what the plan saw (issue 31's
neighbour): a hand edit or a recreate after the plan, during a long apply or with --no-lock, is never written over
nor deleted; the refusal is one line naming the model and what changed."""

import copy
import json
import re

import httpx
import pytest

NOT_WRITTEN = "nothing was written to it: plan again"


def _before_its_read(fake, monkeypatch, name: str, change) -> list[tuple[str, str]]:
    """The fake, with `change(fake)` done by someone else right before apply's first GET of model `name`."""
    import gpustack_guard.wiring as wiring

    calls: list[tuple[str, str]] = []
    target = fake.by_name(name)["id"]

    def handle(request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and request.url.path == f"/v2/models/{target}" and ("changed", name) not in calls:
            calls.append(("changed", name))
            change(fake)
        calls.append((request.method, request.url.path))
        return fake.handle(request)

    monkeypatch.setattr(wiring, "transport_factory", lambda: httpx.MockTransport(handle))
    return calls


def _edit(specs, name, old, new):
    path = specs / name
    path.write_text(path.read_text().replace(old, new))


def _writes_to(calls, model_id: int) -> list:
    return [c for c in calls if c[0] in ("PUT", "DELETE") and re.fullmatch(rf"/v2/models/{model_id}(/.*)?", c[1])]


def test_a_hand_edit_during_apply_is_not_written_over(gsg, fake, specs, monkeypatch):
    """Before: with the lock held the list was compared once; an edit after that (in the UI, while an earlier group
    was written or waited for) was overwritten by the PUT."""
    assert gsg("apply", str(specs), "--yes").code == 0
    _edit(specs, "llama-8b.yaml", "max_num_seqs: 64", "max_num_seqs: 48")
    mid = fake.by_name("llama-8b")["id"]

    def by_hand(f):
        f.models[mid]["backend_parameters"] = [*f.models[mid]["backend_parameters"], "--max-model-len=2048"]

    calls = _before_its_read(fake, monkeypatch, "llama-8b", by_hand)
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1, result.err
    assert ("failed: llama-8b: update: 'llama-8b' changed on the server since the plan was made "
            f"(backend_parameters); {NOT_WRITTEN}") in result.err
    assert not _writes_to(calls, mid) and "--max-model-len=2048" in fake.models[mid]["backend_parameters"]


def test_a_prune_never_deletes_a_model_recreated_under_the_same_id_after_the_plan(gsg, fake, specs, monkeypatch):
    """Before: with --no-lock (or during a long apply) a model deleted and recreated under its old id by another
    apply of this project passed every check (same id, name and owner) and was deleted."""
    assert gsg("apply", str(specs), "--yes").code == 0
    (specs / "llama-8b.yaml").unlink()
    mid = fake.by_name("llama-8b")["id"]

    def recreated(f):
        again = copy.deepcopy(f.models.pop(mid))
        again.update(created_at="2026-12-06T12:00:00+00:00", backend_parameters=["--max-num-seqs=8"])
        f.models[mid] = again

    calls = _before_its_read(fake, monkeypatch, "llama-8b", recreated)
    result = gsg("apply", str(specs), "--yes", "--prune", "--no-lock")
    assert result.code == 1, result.err
    assert ("failed: llama-8b: delete: 'llama-8b' changed on the server since the plan was made "
            f"(backend_parameters, created_at: recreated under the same id); {NOT_WRITTEN}") in result.err
    assert not _writes_to(calls, mid) and fake.models[mid]["backend_parameters"] == ["--max-num-seqs=8"]


def test_an_unchanged_model_is_still_written_and_pruned_without_the_lock(gsg, fake, specs):
    assert gsg("apply", str(specs), "--yes").code == 0
    _edit(specs, "llama-8b.yaml", "max_num_seqs: 64", "max_num_seqs: 48")
    (specs / "llama-70b-gguf.yaml").unlink()
    result = gsg("apply", str(specs), "--yes", "--prune", "--no-lock")
    assert result.code == 0 and "1 updated" in result.out and "1 deleted" in result.out, result.err
    assert gsg("plan", str(specs), "--prune", "--detailed-exitcode").code == 0


def test_a_saved_plan_names_a_model_deleted_and_recreated_under_a_new_id(gsg, fake, specs, tmp_path):
    """Before: refused, without saying what changed."""
    assert gsg("apply", str(specs), "--yes").code == 0
    _edit(specs, "llama-8b.yaml", "max_num_seqs: 64", "max_num_seqs: 48")
    plan_file = tmp_path / "plan.json"
    assert gsg("plan", str(specs), "--out", str(plan_file)).code == 0
    old = fake.by_name("llama-8b")
    fake.models.pop(old["id"])
    new_id = max(fake.models) + 100
    fake.models[new_id] = {**copy.deepcopy(old), "id": new_id}
    assert json.loads(plan_file.read_text())["changes"]
    result = gsg("apply", str(plan_file), "--yes")
    assert result.code == 1, result.err
    assert (f"'llama-8b' changed on the server since the plan was made (it was model id {old['id']} then, it is "
            f"id {new_id} now: deleted and recreated); {NOT_WRITTEN}") in result.err
    assert fake.models[new_id]["backend_parameters"] == old["backend_parameters"]


def test_a_prune_whose_model_was_recreated_under_a_new_id_is_not_reported_deleted(gsg, fake, specs, monkeypatch):
    """Before: the planned id answered 404, the delete counted as done ("1 deleted", exit 0) while a model of the
    name, recreated by someone else, was live."""
    assert gsg("apply", str(specs), "--yes").code == 0
    (specs / "llama-8b.yaml").unlink()
    old = fake.by_name("llama-8b")["id"]
    new_id = max(fake.models) + 100

    def recreated(f):
        f.models[new_id] = {**f.models.pop(old), "id": new_id}

    calls = _before_its_read(fake, monkeypatch, "llama-8b", recreated)
    result = gsg("apply", str(specs), "--yes", "--prune")
    assert result.code == 1 and "Apply complete" not in result.out, result.out
    assert (f"failed: llama-8b: delete: 'llama-8b': model id {old} is gone, but the server now holds this name as "
            f"id {new_id} (recreated since the plan); it is not deleted: plan again") in result.err
    assert not _writes_to(calls, new_id) and new_id in fake.models


def test_a_model_deleted_between_the_read_and_the_put_is_not_recreated(gsg, fake, specs, monkeypatch):
    """Before: the PUT's 404 was a bare `HTTP 404 NotFound` line, not saying the model is gone and stays gone."""
    import gpustack_guard.wiring as wiring

    assert gsg("apply", str(specs), "--yes").code == 0
    _edit(specs, "llama-8b.yaml", "max_num_seqs: 64", "max_num_seqs: 48")
    mid = fake.by_name("llama-8b")["id"]

    def handle(request: httpx.Request) -> httpx.Response:
        if request.method == "PUT" and request.url.path == f"/v2/models/{mid}":
            fake.models.pop(mid, None)  # deleted by someone else just before the PUT arrives
        return fake.handle(request)

    monkeypatch.setattr(wiring, "transport_factory", lambda: httpx.MockTransport(handle))
    fake.log.clear()
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1
    assert (f"failed: llama-8b: update: 'llama-8b': model id {mid} was deleted on the server while apply updated it "
            f"(PUT /v2/models/{mid}: HTTP 404); it is not recreated: plan again") in result.err
    assert fake.by_name("llama-8b") is None
    assert [c for c in fake.log if c[0] == "POST"] == [("POST", "/v2/models")]  # the lease's create only


@pytest.mark.parametrize("meanwhile,says", [
    ("moved", " changed on the server since the plan was made (cluster_id); " + NOT_WRITTEN),
    ("owner removed", ": its owner changed since the plan (now: not managed by gsg); refusing to touch it"),
    ("another project", ": its owner changed since the plan (now: gsg project 'someone-else'); refusing to touch it"),
])
@pytest.mark.parametrize("action", ["update", "delete"])
def test_a_model_moved_or_no_longer_ours_after_the_plan_is_not_touched(gsg, fake, specs, monkeypatch, meanwhile,
                                                                      says, action):
    from gpustack_guard.core.ownership import PROJECT

    assert gsg("apply", str(specs), "--yes").code == 0
    if action == "update":
        _edit(specs, "llama-8b.yaml", "max_num_seqs: 64", "max_num_seqs: 48")
    else:
        (specs / "llama-8b.yaml").unlink()
    mid = fake.by_name("llama-8b")["id"]
    other = max(c["id"] for c in fake.clusters) + 1  # another cluster's id (one more would make specs name theirs)

    def change(f):
        model = f.models[mid]
        if meanwhile == "moved":
            model["cluster_id"] = other
        elif meanwhile == "owner removed":
            model["meta"] = {}
        else:
            model["meta"] = {**model["meta"], PROJECT: "someone-else"}

    calls = _before_its_read(fake, monkeypatch, "llama-8b", change)
    result = gsg("apply", str(specs), "--yes", "--prune", "--no-lock")
    assert result.code == 1 and f"failed: llama-8b: {action}: 'llama-8b'{says}" in result.err, result.err
    assert not _writes_to(calls, mid)
