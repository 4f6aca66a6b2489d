"""Round 26 of misbehaving servers and racing writers, each the case gsg mishandled before, with its neighbours:
a DELETE retried blind after a 5xx or a cut connection (the first had landed and a server that reuses ids gave
the id to another model, which the retry deleted: a prune of one model removed a stranger, reported as success)."""

from __future__ import annotations

import functools

import httpx
import pytest
from support.fake_gpustack import in_front

MODEL_PATH = "/v2/models/{}"
LOCK = "gsg-lock-field-notes-example"  # specs/gsg.yaml's project




def _reuse_id(fake, model_id: int, name: str, **fields) -> None:
    """Another writer creates a model that gets `model_id` (freed a moment ago): SQLite's highest free rowid."""
    other = fake.create_unmanaged(name, **fields)
    fake.models[model_id] = {**fake.models.pop(other["id"]), "id": model_id}


def _pruned(gsg, fake, specs) -> int:
    assert gsg("apply", str(specs), "--yes").code == 0
    (specs / "llama-8b.yaml").unlink()
    return fake.by_name("llama-8b")["id"]


def _deletes(calls, model_id: int) -> list:
    return [c for c in calls if c == ("DELETE", MODEL_PATH.format(model_id))]


# --- a DELETE whose answer is lost is never sent again blind ----------------------------------------------------

def _lost_delete(fake, model_id: int, answer, successor):
    """The first DELETE of `model_id` lands, its answer is lost (`answer()`: a 5xx or an exception), and
    `successor(fake)` runs right after (another writer)."""
    done: list[bool] = []

    def instead(request):
        if request.method == "DELETE" and request.url.path == MODEL_PATH.format(model_id) and not done:
            done.append(True)
            fake.handle(request)
            successor(fake)
            return answer(request)
        return None

    return instead


LOST = {
    "503": lambda request: httpx.Response(503, json={"message": "busy"}),
    "502": lambda request: httpx.Response(502, text="Bad Gateway"),
    "reset": lambda request: (_ for _ in ()).throw(httpx.RemoteProtocolError("reset", request=request)),
    "timeout": lambda request: (_ for _ in ()).throw(httpx.ReadTimeout("timed out", request=request)),
}
SAID = {"503": "HTTP 503 Service Unavailable: busy", "502": "HTTP 502 Bad Gateway",
        "reset": "the connection broke before the answer was complete: reset",
        "timeout": "timed out after 15.0s waiting for the server"}


@pytest.mark.parametrize("lost", sorted(LOST))
@pytest.mark.parametrize("successor,why", [
    ("stranger", "GET /v2/models/{id} is the model named 'stranger', not 'llama-8b'"),
    ("same name, unmanaged", "its owner changed since the plan (now: not managed by gsg)"),
])
def test_a_prune_whose_delete_answer_is_lost_never_deletes_the_model_that_took_its_id(
        gsg, fake, specs, monkeypatch, lost, successor, why):
    """Before: the client sent the DELETE again after the 5xx (or the cut connection); the id was another model's by
    then, and it was deleted too, with "Apply complete: ... 1 deleted" and exit 0."""
    mid = _pruned(gsg, fake, specs)
    name = "stranger" if successor == "stranger" else "llama-8b"
    calls = in_front(fake, monkeypatch, _lost_delete(fake, mid, LOST[lost], lambda f: _reuse_id(f, mid, name)))
    result = gsg("apply", str(specs), "--yes", "--prune")
    assert result.code == 1, result.err
    assert (f"failed: llama-8b: delete: 'llama-8b': the delete of model id {mid} may or may not have landed "
            f"(DELETE /v2/models/{mid}: {SAID[lost]}) and the id no longer holds the model it was sent for "
            f"({why.format(id=mid)}); it is not sent again (nothing more is written)\n") in result.err
    assert len(_deletes(calls, mid)) == 1 and fake.models[mid]["name"] == name
    assert "Traceback" not in result.err
    # the rerun converges: the pruned model is gone, the other writer's is not gsg's to touch
    monkeypatch.setattr("gpustack_guard.wiring.transport_factory", fake.transport)
    again = gsg("apply", str(specs), "--yes", "--prune")
    assert again.code == 0 and fake.models[mid]["name"] == name, again.err
    assert gsg("plan", str(specs), "--prune", "--detailed-exitcode").code == 0


@pytest.mark.parametrize("lost", sorted(LOST))
def test_a_lost_delete_answer_with_the_model_gone_is_done_without_a_second_delete(gsg, fake, specs, monkeypatch,
                                                                                    lost):
    mid = _pruned(gsg, fake, specs)
    calls = in_front(fake, monkeypatch, _lost_delete(fake, mid, LOST[lost], lambda f: None))
    result = gsg("apply", str(specs), "--yes", "--prune")
    assert result.code == 0 and "1 deleted" in result.out, result.err
    assert len(_deletes(calls, mid)) == 1 and mid not in fake.models
    assert calls[calls.index(("DELETE", MODEL_PATH.format(mid))) + 1] == ("GET", MODEL_PATH.format(mid))


@pytest.mark.parametrize("status", [502, 503, 504])
def test_a_delete_refused_with_a_5xx_is_sent_again_once_the_id_is_read_as_the_same_model(
        gsg, fake, specs, monkeypatch, slept, status):
    """The neighbour: the DELETE did not land (the model is still there, unchanged): it is sent again after the
    client's backoff, each time right after a read of the id."""
    mid = _pruned(gsg, fake, specs)
    refused: list[int] = []

    def instead(request):
        if request.method == "DELETE" and request.url.path == MODEL_PATH.format(mid) and len(refused) < 2:
            refused.append(status)
            return httpx.Response(status, json={"message": "try later"})
        return None

    calls = in_front(fake, monkeypatch, instead)
    slept.clear()
    result = gsg("apply", str(specs), "--yes", "--prune")
    assert result.code == 0 and "1 deleted" in result.out, result.err
    assert len(_deletes(calls, mid)) == 3 and mid not in fake.models
    first = calls.index(("DELETE", MODEL_PATH.format(mid)))
    assert calls[first:first + 6] == [("DELETE", MODEL_PATH.format(mid)), ("GET", MODEL_PATH.format(mid))] * 3
    assert len(slept) == 2 and 0.5 <= slept[0] <= 0.75 and 1.0 <= slept[1] <= 1.5  # backoff 0.5 * 2**n, +jitter


def test_a_delete_refused_every_time_is_one_line_after_the_retries(gsg, fake, specs, monkeypatch):
    mid = _pruned(gsg, fake, specs)

    def instead(request):
        if request.method == "DELETE" and request.url.path == MODEL_PATH.format(mid):
            return httpx.Response(503, json={"message": "down"})
        return None

    calls = in_front(fake, monkeypatch, instead)
    result = gsg("apply", str(specs), "--yes", "--prune")
    assert result.code == 1
    assert (f"failed: llama-8b: delete: DELETE /v2/models/{mid}: HTTP 503 Service Unavailable: down\n"
            in result.err), result.err
    assert len(_deletes(calls, mid)) == 4 and fake.models[mid]["name"] == "llama-8b"  # retries + 1, each re-read


@pytest.mark.parametrize("status", [400, 403, 409, 500])
def test_a_delete_refused_with_a_status_no_retry_helps_is_not_sent_again(gsg, fake, specs, monkeypatch, status):
    """500 is no 502/503/504: not retried for a read either."""
    mid = _pruned(gsg, fake, specs)

    def instead(request):
        if request.method == "DELETE" and request.url.path == MODEL_PATH.format(mid):
            return httpx.Response(status, json={"message": "no"})
        return None

    calls = in_front(fake, monkeypatch, instead)
    result = gsg("apply", str(specs), "--yes", "--prune")
    assert result.code == 1 and f"DELETE /v2/models/{mid}: HTTP {status} " in result.err, result.err
    assert len(_deletes(calls, mid)) == 1 and mid in fake.models


def test_the_client_sends_a_delete_once_on_a_5xx_and_waits_out_a_429():
    from gpustack_guard.adapters.gpustack.client import ApiError, GPUStackClient

    answers = [httpx.Response(503), httpx.Response(429, headers={"retry-after": "1"}), httpx.Response(200)]
    sent: list[str] = []

    def handle(request):
        sent.append(request.method)
        return answers.pop(0)

    client = GPUStackClient("http://gpustack.test", "k", transport=httpx.MockTransport(handle), sleep=lambda s: None)
    with pytest.raises(ApiError) as exc:
        client.delete_model(7)
    assert exc.value.status == 503 and sent == ["DELETE"]
    assert client.delete_model(7) is None and sent == ["DELETE"] * 3  # the 429: refused unseen, waited for


# --- the apply lock's release: the same lost answer ------------------------------------------------------------

def test_a_lock_release_whose_answer_is_lost_never_deletes_the_model_that_took_its_id(gsg, fake, specs,
                                                                                       monkeypatch):
    """Before: the release's DELETE was retried by the client blind; the id, reused by a deployment meanwhile,
    was deleted. Now the release reads the id again before its second attempt and leaves it alone."""
    done: list[int] = []

    def instead(request):
        lock = fake.by_name(LOCK)
        if request.method == "DELETE" and lock is not None and request.url.path == MODEL_PATH.format(lock["id"]) \
                and not done:
            done.append(lock["id"])
            fake.handle(request)
            _reuse_id(fake, lock["id"], "stranger")
            return httpx.Response(503, json={"message": "busy"})
        return None

    calls = in_front(fake, monkeypatch, instead)
    result = gsg("apply", str(specs), "--yes")
    reused = done[0]
    assert result.code == 0, result.err
    assert (f"gsg: warning: the apply lock '{LOCK}' was removed or taken over during this apply; model id {reused} "
            "is no longer it and is left alone\n") in result.err
    assert len(_deletes(calls, reused)) == 1 and fake.models[reused]["name"] == "stranger"


# --- a saved plan's precondition: the live model it was reviewed against ----------------------------------------

@pytest.mark.parametrize("live", [None, {}, {"id": 0}, {"id": 0, "updated_at": None},
                                  {"id": 0, "digest": None}, {"id": 0, "digest": 7}])
@pytest.mark.parametrize("action", ["update", "delete"])
def test_a_saved_plan_without_the_live_models_digest_is_refused_before_any_write(gsg, fake, specs, tmp_path, live,
                                                                                 action):
    """Before: a saved plan whose `live` was cut (an edited or damaged file) lost its precondition: apply compared
    the model with the state it read itself, so a hand edit made after the plan was reviewed was written over (or
    the edited model pruned) and the apply reported success."""
    import json

    assert gsg("apply", str(specs), "--yes").code == 0
    if action == "update":
        path = specs / "llama-8b.yaml"
        path.write_text(path.read_text().replace("max_num_seqs: 64", "max_num_seqs: 48"))
    else:
        (specs / "llama-8b.yaml").unlink()
    plan_file = tmp_path / "plan.json"
    assert gsg("plan", str(specs), "--prune", "--out", str(plan_file)).code == 0
    document = json.loads(plan_file.read_text())
    (change,) = [c for c in document["changes"] if c["name"] == "llama-8b"]
    assert change["action"] == action and isinstance(change["live"]["digest"], str)
    change["live"] = live if live is None else {**live, "id": change["live"]["id"]} if live else live
    plan_file.write_text(json.dumps(document))
    mid = fake.by_name("llama-8b")["id"]
    fake.models[mid]["backend_parameters"].append("--max-model-len=2048")  # a hand edit after the review
    fake.log.clear()
    result = gsg("apply", str(plan_file), "--yes")
    assert result.code == 1
    assert result.err.splitlines()[-1] == (f"gsg: error: {plan_file}: 'llama-8b': the saved plan does not record the "
                                           f"live model it would {action} (`live.digest`); plan again")
    assert not [c for c in fake.log if c[0] != "GET"]  # not even the lock
    assert fake.models[mid]["backend_parameters"][-1] == "--max-model-len=2048"


def test_a_saved_plan_with_its_digest_still_applies_and_a_create_needs_none(gsg, fake, specs, tmp_path):
    """The neighbours: an untouched saved plan applies; a create has no live model to record (`live` null)."""
    import json

    assert gsg("apply", str(specs), "--yes").code == 0
    path = specs / "llama-8b.yaml"
    path.write_text(path.read_text().replace("max_num_seqs: 64", "max_num_seqs: 48"))
    fake.models.pop(fake.by_name("qwen-32b")["id"])
    plan_file = tmp_path / "plan.json"
    assert gsg("plan", str(specs), "--out", str(plan_file)).code == 0
    actions = {c["name"]: (c["action"], c["live"]) for c in json.loads(plan_file.read_text())["changes"]}
    assert actions["qwen-32b"] == ("create", None) and actions["llama-8b"][0] == "update"
    result = gsg("apply", str(plan_file), "--yes")
    assert result.code == 0 and "1 created, 1 updated" in result.out, result.err


def test_a_lock_takeover_whose_delete_answer_is_lost_never_deletes_the_model_that_took_its_id(gsg, fake, specs,
                                                                                             monkeypatch):
    """Before: the takeover's DELETE of an expired lock was retried blind after a 503; the id, reused by a
    deployment meanwhile, was deleted. Now the takeover stops with one line, nothing written, and the rerun
    takes the lock afresh."""
    import time

    from gpustack_guard.core.deploy.lease import LEASE, LEASE_EXPIRES, LEASE_HOST, LEASE_PID, LEASE_TOKEN

    stale = fake.create_unmanaged(LOCK, replicas=0, backend_parameters=[], gpu_selector=None, meta={
        LEASE: "ci@runner-7 pid 4242", LEASE_EXPIRES: str(int(time.time() - 1)), LEASE_TOKEN: "feedface",
        LEASE_HOST: "runner-7", LEASE_PID: "4242"})["id"]
    calls = in_front(fake, monkeypatch, _lost_delete(fake, stale, LOST["503"],
                                                      lambda f: _reuse_id(f, stale, "stranger")))
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1
    assert result.err.splitlines()[-1] == (f"gsg: error: DELETE /v2/models/{stale}: HTTP 503 Service Unavailable: "
                                           "busy"), result.err
    assert len(_deletes(calls, stale)) == 1 and fake.models[stale]["name"] == "stranger"
    assert [c for c in calls if c[0] in ("POST", "PUT", "DELETE")] == [("POST", "/v2/models"),
                                                                       ("DELETE", MODEL_PATH.format(stale))]
    monkeypatch.setattr("gpustack_guard.wiring.transport_factory", fake.transport)
    again = gsg("apply", str(specs), "--yes")
    assert again.code == 0 and fake.models[stale]["name"] == "stranger", again.err
    assert fake.by_name(LOCK) is None


# --- another writer at every request of an apply ----------------------------------------------------------------

SERVER_WRITTEN = {"ready_replicas", "state", "state_message", "restarting_since", "updated_at", "categories"}


def _meanwhile(kind: str, fake, model_id: int, other_cluster: int) -> None:
    model = fake.models.get(model_id)
    if model is None:
        return
    if kind == "edit":
        model["backend_parameters"] = [*model["backend_parameters"], "--max-model-len=2048"]
    elif kind == "scale":
        model["replicas"] = 3
    elif kind == "owner removed":
        model["meta"] = {}
    elif kind == "moved":
        model["cluster_id"] = other_cluster
    elif kind == "renamed":
        model["name"] = model["name"].upper()
    elif kind == "id reused":
        del fake.models[model_id]
        _reuse_id(fake, model_id, "stranger")
    else:  # "deleted"
        del fake.models[model_id]


def _writer_before(at: int, meanwhile, fake, model_id: int):
    """The fake with `meanwhile()` done right before the `at`-th request to /v2/; `left` gets, when it ran, the
    model as it left it, the request it came before and whether the plan's list had been read by then."""
    import copy

    calls: list[tuple[str, str]] = []
    left: list = []

    def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/v2/") and sum(c[1].startswith("/v2/") for c in calls) + 1 == at:
            meanwhile()
            left.append((copy.deepcopy(fake.models.get(model_id)), (request.method, request.url.path),
                         ("GET", "/v2/models") in calls))
        calls.append((request.method, request.url.path))
        return fake.handle(request)

    return handle, left


@pytest.mark.parametrize("kind", ["edit", "scale", "owner removed", "moved", "renamed", "id reused", "deleted"])
@pytest.mark.parametrize("target", ["llama-8b", "llama-70b-q4"], ids=["update", "prune"])
def test_another_writer_at_any_request_after_the_plan_is_never_written_over(gsg, fake, specs, monkeypatch, kind,
                                                                            target):
    """Each precondition of an update (with its restart) and of a prune broken by another writer before each
    request apply makes after reading the list it plans from, in a run that also creates: the model ends as that
    writer left it, and apply ends in one line (exit 0 or 1). The one exception is the write right after apply's
    own check of that model: GPUStack has no conditional PUT or DELETE to close that window."""
    import copy

    import gpustack_guard.wiring as wiring

    assert gsg("apply", str(specs), "--yes").code == 0
    path = specs / "llama-8b.yaml"
    path.write_text(path.read_text().replace("max_num_seqs: 64", "max_num_seqs: 48"))
    (specs / "llama-70b-gguf.yaml").unlink()
    fake.models.pop(fake.by_name("llama-70b")["id"])
    models, instances = copy.deepcopy(fake.models), copy.deepcopy(fake.instances)
    model_id = fake.by_name(target)["id"]
    other_cluster = max(c["id"] for c in fake.clusters) + 1
    checked = 0
    for at in range(1, 80):
        fake.models, fake.instances = copy.deepcopy(models), copy.deepcopy(instances)
        handle, left = _writer_before(at, lambda: _meanwhile(kind, fake, model_id, other_cluster), fake, model_id)
        monkeypatch.setattr(wiring, "transport_factory", functools.partial(httpx.MockTransport, handle))
        result = gsg("apply", str(specs), "--yes", "--prune")
        if not left:
            break  # the run made fewer requests than `at`
        after, request, planned = left[0]
        assert result.code in (0, 1) and "Traceback" not in result.err, (at, result.err)
        if not planned or request in (("PUT", MODEL_PATH.format(model_id)), ("DELETE", MODEL_PATH.format(model_id))):
            continue  # the plan saw it / the window no check can close
        checked += 1
        now = fake.models.get(model_id)
        assert (now and {k: v for k, v in now.items() if k not in SERVER_WRITTEN}) == \
            (after and {k: v for k, v in after.items() if k not in SERVER_WRITTEN}), (at, request, result.err)
    assert checked >= 8, checked  # the writer really came between apply's own requests


# --- the read-only commands: two live models of one name --------------------------------------------------------

@pytest.mark.parametrize("twin", ["first", "last"])
def test_verify_never_judges_one_of_two_models_of_a_name_picked_by_list_order(gsg, fake, tmp_path, monkeypatch,
                                                                               twin):
    """Before: `gsg verify SPECS` verified the first listed model of the spec's name and passed (exit 0) while the
    server held a second one, which plan calls a conflict (the spec runs twice, or a stranger runs under its
    name): a log of either one was taken as the spec's. Now the spec is not verified, naming both ids."""
    import copy

    from test_verify_live import L40S_LOG, deploy, tuned

    monkeypatch.chdir(tmp_path)
    (iid,) = deploy(fake, tmp_path, tuned("0.78"))
    fake.instance_logs[iid] = L40S_LOG
    assert gsg("verify", "specs/").code == 0  # the neighbour: one model of the name is verified
    first = fake.by_name("llama-8b")["id"]
    second = max(fake.models) + 1
    fake.models[second] = {**copy.deepcopy(fake.models[first]), "id": second}
    if twin == "first":  # the copy listed first: the order must not decide
        fake.models = {second: fake.models.pop(second), **fake.models}
    ids = f"{second}, {first}" if twin == "first" else f"{first}, {second}"
    result = gsg("verify", "specs/")
    assert result.code == 1, result.out
    assert (f"not verified: the server lists 2 models of this name (ids {ids}); which one runs this spec cannot be "
            "told") in result.out, result.out
    assert result.err.endswith("gsg: verify: 0 of 0 instance(s) verified in 1 deployment(s), 0 not verified, "
                               "0 not running, 0 finding(s): fail\n")
