"""Round 28 of misbehaving servers and racing writers, each the case gsg mishandled before, with its neighbours:
a create answered 2xx without a model (202 or 204 with no body, a proxy's page, another schema) was sent again
when the server listed no model of the name yet (a second POST the server had not refused: a duplicate once the
first lands), and the apply lock removed or taken over between two groups of writes (apply went on writing beside
whoever held the lock by then), and a second model of a planned name listed before it under the lock (passed
unseen)."""

from __future__ import annotations

import httpx
import pytest
from support.fake_gpustack import in_front

LOCK = "gsg-lock-field-notes-example"  # specs/gsg.yaml's project
MODEL_PATH = "/v2/models/{}"


def _is_deployment_create(request: httpx.Request) -> bool:
    return request.method == "POST" and request.url.path == "/v2/models" and LOCK.encode() not in request.content


def _creates(calls):
    return [c for c in calls if c == ("POST", "/v2/models")]


# --- a create answered 2xx without a model ---------------------------------------------------------------------

UNUSABLE_2XX = {
    "202 no body": (httpx.Response(202), "the answer is missing or null, not a model object"),
    "204": (httpx.Response(204), "the answer is missing or null, not a model object"),
    "200 null": (httpx.Response(200, json=None), "the answer is missing or null, not a model object"),
    "200 login page": (httpx.Response(200, text="<html>sign in</html>"),
                       "HTTP 200 but the body is not JSON (is http://gpustack.test a GPUStack server?)"),
    "201 id as text": (httpx.Response(201, json={"id": "9", "name": "llama-70b-q4"}),
                       "the answer: field 'id' is text, expected an integer"),
    "200 a list": (httpx.Response(200, json=[{"id": 9, "name": "llama-70b-q4"}]),
                   "the answer is a list, not a model object"),
}


@pytest.mark.parametrize("case", UNUSABLE_2XX)
def test_a_create_answered_2xx_without_a_model_is_not_sent_again(gsg, fake, specs, monkeypatch, case):
    """Before: such an answer was taken for a lost one: a lookup by name found nothing (the server creates in the
    background, or the proxy swallowed it) and the POST was sent a second time. The server took the first: the
    create stops with one line, nothing else is written, and the next apply converges."""
    answer, detail = UNUSABLE_2XX[case]
    taken: list[str] = []

    def instead(request):
        if _is_deployment_create(request) and not taken:
            taken.append(request.url.path)
            return answer  # accepted, stored later (or never): the fake holds nothing yet
        return None

    calls = in_front(fake, monkeypatch, instead)
    result = gsg("apply", str(specs), "--yes", "--concurrency", "1")
    assert result.code == 1, result.err
    assert ("  failed: llama-70b-q4: create: 'llama-70b-q4': the server took the create (HTTP 2xx) but its answer "
            f"is no model ({detail}) and it lists no model of this name; the create is not sent again (a second one "
            "could make a duplicate): plan again\n") in result.err
    assert "  not attempted: create llama-70b, create llama-8b, create qwen-32b\n" in result.err
    assert len(_creates(calls)) == 2  # the lock's and the one create; no second POST of llama-70b-q4
    assert [m["name"] for m in fake.models.values()] == []  # the lock given back, nothing else written
    again = gsg("apply", str(specs), "--yes")
    assert again.code == 0, again.err
    assert sorted(m["name"] for m in fake.models.values()) == ["llama-70b", "llama-70b-q4", "llama-8b", "qwen-32b"]


@pytest.mark.parametrize("case", ["202 no body", "200 login page", "201 id as text"])
def test_a_create_answered_2xx_without_a_model_that_landed_is_found_and_checked(gsg, fake, specs, monkeypatch,
                                                                                 case):
    """The neighbour: the server stored it before its unusable answer: the lookup by name finds this spec's model
    (its digest) and reads it back as the create's answer; one POST each, the apply completes."""
    answer, _ = UNUSABLE_2XX[case]
    replaced: list[str] = []

    def then(request, stored):
        if _is_deployment_create(request) and not replaced:
            replaced.append(request.url.path)
            return answer
        return None

    calls = in_front(fake, monkeypatch, then=then)
    result = gsg("apply", str(specs), "--yes", "--concurrency", "1")
    assert result.code == 0, result.err
    assert "Apply complete: 4 created, 0 updated, 0 replaced, 0 deleted." in result.out
    assert len(_creates(calls)) == 5  # the lock's and one per model
    assert sorted(m["name"] for m in fake.models.values()) == ["llama-70b", "llama-70b-q4", "llama-8b", "qwen-32b"]


@pytest.mark.parametrize("status", [500, 502, 503])
def test_a_create_answered_with_a_5xx_and_not_stored_is_still_sent_again(gsg, fake, specs, monkeypatch, status):
    """The neighbour that keeps its retry: a 5xx is no acceptance; a lookup that finds nothing lets the POST go
    again, once."""
    refused: list[str] = []

    def instead(request):
        if _is_deployment_create(request) and not refused:
            refused.append(request.url.path)
            return httpx.Response(status, json={"detail": "busy"})
        return None

    calls = in_front(fake, monkeypatch, instead)
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 0, result.err
    assert len(_creates(calls)) == 6  # the lock's, the refused one, its retry and three more
    assert sorted(m["name"] for m in fake.models.values()) == ["llama-70b", "llama-70b-q4", "llama-8b", "qwen-32b"]


def test_the_lock_create_answered_2xx_without_a_lease_is_not_sent_again(gsg, fake, specs, monkeypatch):
    """The lock's create too: a 202 with no body, nothing listed under its token: one line, no second POST."""
    def instead(request):
        if request.method == "POST" and request.url.path == "/v2/models":
            return httpx.Response(202)
        return None

    calls = in_front(fake, monkeypatch, instead)
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1
    assert result.err == ("gsg: error: POST /v2/models: the answer is missing or null, not a model object\n")
    assert len(_creates(calls)) == 1 and fake.models == {}


# --- the apply lock removed or taken over between groups of writes --------------------------------------------

def _two_groups(gsg, specs):
    """A live project whose next apply deletes one model (--prune: the first group) and updates another."""
    assert gsg("apply", str(specs), "--yes").code == 0
    (specs / "llama-8b.yaml").unlink()
    path = specs / "llama-70b.yaml"
    path.write_text(path.read_text().replace("fp8 KV cache", "fp8 KV cache, edited"))


@pytest.mark.parametrize("successor", ["removed", "deployment", "lease"])
def test_a_lock_lost_between_groups_of_writes_stops_the_apply(gsg, fake, specs, monkeypatch, successor):
    """Before: apply went on writing after its lock was deleted (by hand, as a held lock's message suggests) or
    taken over by another apply, and only its release noticed. Now the lock's id is read before each group after
    the first: the groups not started are not attempted, and the next apply converges."""
    from gpustack_guard.core.deploy.lease import LEASE_TOKEN

    _two_groups(gsg, specs)
    pruned = fake.by_name("llama-8b")["id"]
    updated = fake.by_name("llama-70b")
    lost: list[int] = []

    def then(request, answer):
        if request.method == "DELETE" and request.url.path == MODEL_PATH.format(pruned):
            lock = fake.by_name(LOCK)
            lost.append(lock["id"])
            del fake.models[lock["id"]]
            if successor != "removed":  # the id handed to another model (SQLite reuses the highest free rowid)
                other = fake.create_unmanaged(LOCK if successor == "lease" else "stranger")
                fake.models[lock["id"]] = {**fake.models.pop(other["id"]), "id": lock["id"]}
                if successor == "lease":
                    fake.models[lock["id"]]["meta"] = {**lock["meta"], LEASE_TOKEN: "another-apply"}
        return None

    calls = in_front(fake, monkeypatch, then=then)
    result = gsg("apply", str(specs), "--yes", "--prune")
    assert result.code == 1, result.err
    assert "  done: delete llama-8b\n" in result.err
    assert (f"  failed: apply lock: the apply lock '{LOCK}' was removed or taken over during this apply (model id "
            f"{lost[0]} no longer holds it); nothing more is written: plan again\n") in result.err
    assert "  not attempted: update llama-70b\n" in result.err
    assert ("PUT", MODEL_PATH.format(updated["id"])) not in calls
    assert fake.models[updated["id"]]["description"] == "Chat endpoint, 16k context, fp8 KV cache"
    assert [c for c in calls if c[0] == "DELETE"] == [("DELETE", MODEL_PATH.format(pruned))]  # nor the lock's id
    if successor != "removed":
        del fake.models[lost[0]]  # the other holder is done
    again = gsg("apply", str(specs), "--yes", "--prune")
    assert again.code == 0, again.err
    assert "Apply complete: 0 created, 1 updated, 0 replaced, 0 deleted." in again.out
    assert fake.by_name("llama-70b")["description"] == "Chat endpoint, 16k context, fp8 KV cache, edited"


def test_a_lock_still_held_between_groups_is_read_once_per_later_group(gsg, fake, specs, monkeypatch):
    """The neighbour: the lock unchanged, both groups are written; its id is read before the second group (and
    before its release), not before the first, which follows its take at once."""
    _two_groups(gsg, specs)
    taken: list[int] = []

    def then(request, answer):
        if request.method == "POST" and request.url.path == "/v2/models" and LOCK.encode() in request.content:
            taken.append(answer.json()["id"])
        return None

    calls = in_front(fake, monkeypatch, then=then)
    result = gsg("apply", str(specs), "--yes", "--prune")
    assert result.code == 0, result.err
    assert "Apply complete: 0 created, 1 updated, 0 replaced, 1 deleted." in result.out
    lock = MODEL_PATH.format(taken[0])
    assert [c for c in calls if c[1] == lock] == [("GET", lock), ("GET", lock), ("DELETE", lock)]
    first_read = calls.index(("GET", lock))
    pruned = [i for i, c in enumerate(calls) if c[0] == "DELETE" and c[1] != lock]
    puts = [i for i, c in enumerate(calls) if c[0] == "PUT"]
    assert len(pruned) == 1 and pruned[0] < first_read < puts[0]  # between the groups


def test_no_lock_reads_no_lock_between_groups(gsg, fake, specs, monkeypatch):
    """--no-lock: there is no lock to lose; both groups are written."""
    _two_groups(gsg, specs)
    in_front(fake, monkeypatch, lambda request: None)
    result = gsg("apply", str(specs), "--yes", "--prune", "--no-lock")
    assert result.code == 0, result.err
    assert "Apply complete: 0 created, 1 updated, 0 replaced, 1 deleted." in result.out


# --- a second model of a planned name appears before the writes -----------------------------------------------

@pytest.mark.parametrize("action", ["update", "delete"])
@pytest.mark.parametrize("listed", ["first", "last"])
def test_a_second_model_of_a_planned_name_before_the_writes_is_refused(gsg, fake, specs, monkeypatch, action,
                                                                        listed):
    """Before: the check under the lock kept one model per name (the last listed): a twin listed before the planned
    model passed unseen, and apply wrote beside a name the plan would have refused as ambiguous. Now a planned name
    held twice stops the apply before any write, wherever the twin is listed."""
    _two_groups(gsg, specs)
    name = "llama-70b" if action == "update" else "llama-8b"
    planned = fake.by_name(name)

    def then(request, answer):
        if request.method == "POST" and request.url.path == "/v2/models" and LOCK.encode() in request.content:
            twin = {**fake.models[planned["id"]], "id": 900, "cluster_id": fake.clusters[-1]["id"]}
            rest = dict(fake.models)
            fake.models.clear()
            fake.models.update({900: twin, **rest} if listed == "first" else {**rest, 900: twin})
        return None

    calls = in_front(fake, monkeypatch, then=then)
    result = gsg("apply", str(specs), "--yes", "--prune")
    assert result.code == 1, result.err
    ids = f"900, {planned['id']}" if listed == "first" else f"{planned['id']}, 900"
    assert (f"gsg: error: '{name}' is held by 2 models on the server now (ids {ids}), one since this apply planned "
            "it; nothing was written: plan again\n") in result.err
    writes = [c for c in calls if c[0] in ("PUT", "DELETE")]
    assert len(writes) == 1 and writes[0][0] == "DELETE"  # the lock's release, nothing else
    assert fake.models[planned["id"]] == planned and fake.models[900]["name"] == name
