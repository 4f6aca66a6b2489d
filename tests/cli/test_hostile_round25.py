"""Round 25 of misbehaving servers and racing writers, each the case gsg mishandled before, with its neighbours:
a hand edit while apply restarts a model (the PUT that clears the restart-pending mark wrote over it), a PUT sent
again after a 5xx or a cut connection (an edit in between written over), a Retry-After date past datetime's years
(a traceback), a filter of id 0 left out of the query (every cluster's list), a model answer holding one key twice
(bound by the last value, the other reading unknown), and the apply lock released by an id that no longer holds
it (another apply's lock or a deployment deleted)."""

from __future__ import annotations

import httpx
import pytest
from support.fake_gpustack import in_front

MODEL_PATH = "/v2/models/{}"


def _edit(specs, name, old, new):
    path = specs / name
    path.write_text(path.read_text().replace(old, new))


# --- a hand edit while apply restarts the model -----------------------------------------------------------------

@pytest.mark.parametrize("edit,named", [
    (lambda m: m.update(backend_parameters=[*m["backend_parameters"], "--max-model-len=2048"]), "backend_parameters"),
    (lambda m: m.update(replicas=2), "replicas"),
    (lambda m: m["meta"].update({"team": "search"}), "meta"),
])
def test_a_hand_edit_while_apply_restarts_the_model_is_not_written_over(gsg, fake, specs, monkeypatch, edit, named):
    """Before: the PUT that clears the restart-pending mark was built from the model as read before the restart,
    so what someone changed meanwhile (in the UI, another apply with --no-lock) was silently put back."""
    assert gsg("apply", str(specs), "--yes").code == 0
    _edit(specs, "llama-8b.yaml", "max_num_seqs: 64", "max_num_seqs: 48")
    mid = fake.by_name("llama-8b")["id"]

    def around(request, answer):
        if request.method == "POST" and request.url.path == f"/v2/models/{mid}/restart":
            edit(fake.models[mid])

    calls = in_front(fake, monkeypatch, then=around)
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1, result.err
    assert (f"  failed: llama-8b: update: 'llama-8b' changed on the server while apply restarted it ({named}); the "
            "restart-pending mark stays for the next apply: plan again\n") in result.err
    puts = [c for c in calls if c == ("PUT", MODEL_PATH.format(mid))]
    assert len(puts) == 1  # the update itself; the one that clears the mark is not sent
    stored = fake.models[mid]
    assert "--max-num-seqs=48" in stored["backend_parameters"] and stored["meta"]["gsg.dev/restart-pending"]
    edit_kept = {"backend_parameters": "--max-model-len=2048" in stored["backend_parameters"],
                 "replicas": stored["replicas"] == 2, "meta": stored["meta"].get("team") == "search"}
    assert edit_kept[named]


def test_a_restart_without_a_hand_edit_clears_its_mark(gsg, fake, specs, monkeypatch):
    """The neighbour: what the restart itself changes (state, ready replicas, restarting_since) is no edit."""
    assert gsg("apply", str(specs), "--yes").code == 0
    _edit(specs, "llama-8b.yaml", "max_num_seqs: 64", "max_num_seqs: 48")
    mid = fake.by_name("llama-8b")["id"]

    def around(request, answer):
        if request.method == "POST" and request.url.path == f"/v2/models/{mid}/restart":
            fake.models[mid].update(restarting_since="2026-12-07T05:00:00Z", state="pending", ready_replicas=0)

    calls = in_front(fake, monkeypatch, then=around)
    result = gsg("apply", str(specs), "--yes")
    assert (result.code, result.err) == (0, "gsg: updated llama-8b\n"), result.err
    assert calls.count(("PUT", MODEL_PATH.format(mid))) == 2
    assert "gsg.dev/restart-pending" not in fake.models[mid]["meta"]


# --- a PUT is sent once ----------------------------------------------------------------------------------------



def _busy(request):
    return httpx.Response(503, json={"code": 503, "reason": "ServiceUnavailable", "message": "busy"})


def _cut_off(request):
    raise httpx.RemoteProtocolError("Server disconnected without sending a response.", request=request)


def _once(answer):
    """`answer` for the first PUT, nothing for every other request."""
    sent: list[str] = []

    def instead(request):
        if request.method == "PUT" and not sent:
            sent.append(request.url.path)
            return answer(request)
        return None

    return instead


@pytest.mark.parametrize("failure,says", [
    (_busy, "HTTP 503 ServiceUnavailable: busy"),
    (_cut_off, "the connection broke before the answer was complete: Server disconnected without sending a "
               "response."),
])
def test_a_put_that_fails_is_not_sent_again_and_the_next_apply_converges(gsg, fake, specs, monkeypatch, slept,
                                                                          failure, says):
    """Before: a PUT answered 502/503/504 or cut off was sent again after a pause, built from the model as read
    before the first; an edit made in between was written over. Now the step fails, nothing else is written, and
    the next apply picks up from what the server holds."""
    assert gsg("apply", str(specs), "--yes").code == 0
    _edit(specs, "llama-8b.yaml", "max_num_seqs: 64", "max_num_seqs: 48")
    mid = fake.by_name("llama-8b")["id"]
    calls = in_front(fake, monkeypatch, _once(failure))
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1
    assert f"  failed: llama-8b: update: PUT /v2/models/{mid}: {says}\n" in result.err, result.err
    # the apply lease aside (POST /v2/models, its PUTs and DELETE), the one write is that PUT
    assert [c for c in calls if c[0] != "GET" and c[1] in (MODEL_PATH.format(mid), f"/v2/models/{mid}/restart")] == [
        ("PUT", MODEL_PATH.format(mid))]
    assert "--max-num-seqs=48" not in fake.models[mid]["backend_parameters"] and slept == []
    again = gsg("apply", str(specs), "--yes")
    assert again.code == 0 and "--max-num-seqs=48" in fake.models[mid]["backend_parameters"], again.err
    assert gsg("plan", str(specs), "--detailed-exitcode").code == 0


def test_a_put_refused_with_429_is_still_sent_again(gsg, fake, specs, monkeypatch, slept):
    """The neighbour: a 429 is a refusal unseen; the PUT waits as Retry-After says and goes through."""
    assert gsg("apply", str(specs), "--yes").code == 0
    _edit(specs, "llama-8b.yaml", "max_num_seqs: 64", "max_num_seqs: 48")
    mid = fake.by_name("llama-8b")["id"]
    calls = in_front(fake, monkeypatch, _once(lambda request: httpx.Response(429, headers={"Retry-After": "2"})))
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 0, result.err
    assert calls.count(("PUT", MODEL_PATH.format(mid))) == 3  # refused, then the update and the mark's clearing
    assert "--max-num-seqs=48" in fake.models[mid]["backend_parameters"] and slept == [2.0]


# --- Retry-After dates -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("date", ["Mon, 01 Jan 99999999999 00:00:00 GMT", "Fri, 01 Jan 10000 00:00:00 GMT"])
def test_a_retry_after_date_past_datetimes_years_is_one_line(gsg, fake, specs, monkeypatch, slept, date):
    """Before: a year of 11 digits overflowed the date parser (exit 3, 'internal error: OverflowError'); a year
    past 9999 was no date and was retried after the usual backoff."""
    calls = in_front(fake, monkeypatch, lambda request: httpx.Response(429, headers={"Retry-After": date})
                      if request.url.path == "/v2/models" else None)
    result = gsg("plan", str(specs))
    assert (result.code, result.err) == (1, f"gsg: error: GET /v2/models: HTTP 429 Too Many Requests: the server "
                                            f"asks to retry after {date[:40]}, longer than gsg waits (30s, "
                                            "GSG_MAX_RETRY_AFTER)\n")
    assert calls.count(("GET", "/v2/models")) == 1 and slept == []


def test_a_retry_after_date_in_an_unknown_zone_is_read_as_utc(monkeypatch):
    """'-0000' says the zone is unknown (RFC 5322): read as UTC, never as this host's zone (before: a host at
    UTC+5:30 read a date 10 s ahead as 5.5 hours ahead and refused to wait)."""
    import time
    from datetime import datetime, timezone
    from email.utils import format_datetime

    import respx

    from gpustack_guard.adapters.gpustack.client import GPUStackClient

    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    monkeypatch.setattr(time, "time", lambda: 1_800_000_000.0)
    try:
        soon = datetime.fromtimestamp(1_800_000_010, timezone.utc).replace(tzinfo=None)
        header = format_datetime(soon)  # a naive datetime is written with '-0000'
        assert header.endswith("-0000")
        pauses: list[float] = []
        with respx.mock:
            respx.get("http://gpustack.test/v2/models/1").mock(side_effect=[
                httpx.Response(429, headers={"Retry-After": header}), httpx.Response(200, json={"id": 1, "name": "a"})])
            made = GPUStackClient("http://gpustack.test", "k", sleep=pauses.append)
            assert made.get_model(1)["id"] == 1
        assert pauses == [10.0]
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


# --- id 0 is a filter too --------------------------------------------------------------------------------------

def test_a_filter_of_id_0_is_sent_and_checked():
    """Before: cluster_id=0 or model_id=0 was dropped from the query as if no filter was asked for, so --wait on a
    model of id 0 judged every model's instances and an export of cluster 0 listed every cluster's models."""
    import respx

    from gpustack_guard.adapters.gpustack.client import ApiError, GPUStackClient

    page = {"pagination": {"page": 1, "perPage": 500, "total": 1, "totalPage": 1}}
    with respx.mock:
        route = respx.get("http://gpustack.test/v2/model-instances").mock(return_value=httpx.Response(200, json={
            "items": [{"id": 4, "model_id": 3, "cluster_id": 0}], **page}))
        made = GPUStackClient("http://gpustack.test", "k", sleep=lambda _s: None)
        with pytest.raises(ApiError) as exc:
            made.model_instances(model_id=0)
        assert str(exc.value) == ("GET /v2/model-instances: asked for model_id=0 but page 1 lists an item with "
                                  "model_id 3: the server ignored the filter; refusing to act on that list")
        assert route.calls[0].request.url.params["model_id"] == "0"
        assert made.model_instances(cluster_id=0) == [{"id": 4, "model_id": 3, "cluster_id": 0}]
        assert route.calls[1].request.url.params["cluster_id"] == "0"
        empty = {"items": [], "pagination": {"page": 1, "perPage": 500, "total": 0, "totalPage": 0}}
        workers = respx.get("http://gpustack.test/v2/workers").mock(return_value=httpx.Response(200, json=empty))
        models = respx.get("http://gpustack.test/v2/models").mock(return_value=httpx.Response(200, json=empty))
        assert made.workers(cluster_id=0) == [] and made.models(cluster_id=0) == []
        assert workers.calls[0].request.url.params["cluster_id"] == "0"
        assert models.calls[0].request.url.params["cluster_id"] == "0"
        made.workers()
        assert "cluster_id" not in workers.calls[1].request.url.params  # None is still no filter


# --- one key twice in a model answer ---------------------------------------------------------------------------

@pytest.mark.parametrize("first,last,key", [(b'"id": 999, ', b"", "id"), (b"", b', "name": "llama-70b"', "name"),
                                             (b"", b', "meta": {}', "meta")])
def test_a_model_answer_with_a_key_twice_is_refused_before_any_write(gsg, fake, specs, monkeypatch, first, last,
                                                                     key):
    """Before: Python kept the last of the two values, so a GET answering `"id": 999, ..., "id": 9` was bound as
    model 9 while a reader taking the first (a proxy, another client) saw 999; now such an answer is ambiguous and
    refused, whichever of the two is last."""
    assert gsg("apply", str(specs), "--yes").code == 0
    _edit(specs, "llama-8b.yaml", "max_num_seqs: 64", "max_num_seqs: 48")
    mid = fake.by_name("llama-8b")["id"]
    before = fake.by_name("llama-8b")["backend_parameters"]

    def instead(request):
        if request.method == "GET" and request.url.path == MODEL_PATH.format(mid):
            body = fake.handle(request).content
            return httpx.Response(200, content=b"{" + first + body[1:-1] + last + b"}",
                                  headers={"content-type": "application/json"})
        return None

    calls = in_front(fake, monkeypatch, instead)
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1
    assert (f"  failed: llama-8b: update: GET /v2/models/{mid}: an object of the answer holds the key '{key}' twice: "
            "which value is meant cannot be told; refusing the answer\n") in result.err, result.err
    assert not [c for c in calls if c[0] != "GET" and c[1].startswith(f"/v2/models/{mid}")]
    assert fake.by_name("llama-8b")["backend_parameters"] == before


def test_a_model_answer_with_a_key_twice_in_a_nested_object_is_refused_too():
    import respx

    from gpustack_guard.adapters.gpustack.client import ApiError, GPUStackClient

    with respx.mock:
        respx.put("http://gpustack.test/v2/models/7").mock(return_value=httpx.Response(
            200, content=b'{"id": 7, "name": "a", "meta": {"gsg.dev/spec-digest": "x", "gsg.dev/spec-digest": "y"}}'))
        respx.get("http://gpustack.test/v2/models/7").mock(return_value=httpx.Response(
            200, content=b'{"id": 7, "name": "a", "meta": {"gsg.dev/spec-digest": "x", "team": "x"}}'))
        made = GPUStackClient("http://gpustack.test", "k", sleep=lambda _s: None)
        with pytest.raises(ApiError) as exc:
            made.update_model(7, {"name": "a"})
        assert str(exc.value) == ("PUT /v2/models/7: an object of the answer holds the key 'gsg.dev/spec-digest' "
                                  "twice: which value is meant cannot be told; refusing the answer")
        assert made.get_model(7)["meta"] == {"gsg.dev/spec-digest": "x", "team": "x"}  # the same value, two keys


# --- the apply lock's release ----------------------------------------------------------------------------------

LOCK = "gsg-lock-field-notes-example"  # specs/gsg.yaml's project


@pytest.mark.parametrize("successor", ["deployment", "lease"])
def test_a_lock_removed_during_apply_is_not_released_by_its_old_id(gsg, fake, specs, monkeypatch, successor):
    """Before: apply released its lock by the id it was created under, unread. Deleted meanwhile (by hand, as a
    held lock's message suggests) on a server that reuses ids (SQLite gives a new row the highest free rowid),
    that id could hold another apply's lock or a deployment by then, and the release deleted it."""
    from gpustack_guard.core.deploy.lease import LEASE_TOKEN

    done: list[int] = []

    def instead(request):
        if request.method == "POST" and request.url.path == "/v2/models" and not done:
            lock = fake.by_name(LOCK)
            if lock is not None:  # the first deployment's create: our lock is held; someone removes it
                done.append(lock["id"])
                del fake.models[lock["id"]]
                other = fake.create_unmanaged(LOCK if successor == "lease" else "stranger")
                fake.models[lock["id"]] = {**fake.models.pop(other["id"]), "id": lock["id"]}
                if successor == "lease":
                    fake.models[lock["id"]]["meta"] = {**lock["meta"], LEASE_TOKEN: "another-apply"}
        return None

    calls = in_front(fake, monkeypatch, instead)
    result = gsg("apply", str(specs), "--yes")
    reused = done[0]
    assert result.code == 0, result.err
    assert (f"gsg: warning: the apply lock '{LOCK}' was removed or taken over during this apply; model id {reused} "
            "is no longer it and is left alone\n") in result.err
    assert ("DELETE", MODEL_PATH.format(reused)) not in calls
    assert fake.models[reused]["name"] == (LOCK if successor == "lease" else "stranger")


def test_a_lock_still_held_is_released_by_its_id(gsg, fake, specs, monkeypatch):
    """The neighbour: the id still holds this run's lock (its token): it is deleted, and only it."""
    calls = in_front(fake, monkeypatch, lambda request: None)
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 0 and "apply lock" not in result.err, result.err
    deletes = [c for c in calls if c[0] == "DELETE"]
    assert len(deletes) == 1 and fake.by_name(LOCK) is None
    assert calls[-2:] == [("GET", deletes[0][1]), deletes[0]]  # read right before it is deleted
