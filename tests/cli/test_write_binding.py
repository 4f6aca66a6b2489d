"""Every write is bound to the deployment it targets (issue 31): a server, proxy or race that answers with another
model, loses an answer, lists a name twice, hides a model or ignores a write never makes apply change another
deployment nor report success; the run stops at the first mismatch, and the next run converges."""

import copy
import json
import re

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpustack_guard.core.deploy.lease import is_lease
from gpustack_guard.core.ownership import RESTART_PENDING

KINDS = ("list", "get", "create", "update", "delete", "restart")
HOW = ("other", "lost", "twice", "hide", "ignore", "partial", "reset")
REFUSED = "refusing to go on (nothing more is written)"


def _kind(method: str, path: str) -> str | None:
    if path == "/v2/models":
        return {"GET": "list", "POST": "create"}.get(method)
    if re.fullmatch(r"/v2/models/\d+/restart", path):
        return "restart"
    if re.fullmatch(r"/v2/models/\d+", path):
        return {"GET": "get", "PUT": "update", "DELETE": "delete"}.get(method)
    return None


class Tampering:
    """The in-memory GPUStack behind a bad proxy: `plan[(kind, n)]` mistreats the n-th request of a kind.

    other   answer with another model than the one asked about (the request itself reaches the server)
    lost    the server does the work, the client gets a 500
    reset   the server never sees the request; the connection breaks
    twice   a list answer names its first model twice, under two ids
    hide    a list answer leaves its first model out (a stale cache: its count agrees)
    drop    a list answer leaves its first model out and still counts it (a page with a hole)
    ignore  a PUT is answered as if stored, and nothing is stored
    partial a PUT is stored without its backend_parameters, and answered as if stored whole
    """

    def __init__(self, fake):
        self.fake, self.plan = fake, {}
        self.counts: dict[str, int] = {}

    def _lease_traffic(self, request: httpx.Request) -> bool:
        if request.method == "POST" and request.content:
            return str(json.loads(request.content).get("name", "")).startswith("gsg-lock")
        tail = request.url.path.rsplit("/", 1)[1]
        if tail.isdigit():
            return is_lease(self.fake.models.get(int(tail)) or {})
        return str(request.url.params.get("search", "")).startswith("gsg-lock")

    def reset(self, plan: dict | None = None) -> None:
        self.plan, self.counts = dict(plan or {}), {}

    def handle(self, request: httpx.Request) -> httpx.Response:
        kind = _kind(request.method, request.url.path)
        if kind is None or self._lease_traffic(request):  # the apply lock has its own tests (test_apply_lock.py)
            return self.fake.handle(request)
        self.counts[kind] = self.counts.get(kind, 0) + 1
        how = self.plan.get((kind, self.counts[kind]))
        if how == "reset":
            raise httpx.RemoteProtocolError("injected reset", request=request)
        if how == "ignore" and kind == "update":
            stored = self.fake.models.get(int(request.url.path.rsplit("/", 1)[1]))
            if stored is not None:
                return httpx.Response(200, json={**copy.deepcopy(stored), **json.loads(request.content)})
        if how == "partial" and kind == "update":
            sent = json.loads(request.content)
            kept = httpx.Request(request.method, request.url, headers=request.headers,
                                 json={k: v for k, v in sent.items() if k != "backend_parameters"})
            return httpx.Response(200, json={**self.fake.handle(kept).json(), **sent})
        response = self.fake.handle(request)
        if how == "lost":
            return httpx.Response(500, json={"message": "upstream went away"})
        body = response.json() if response.status_code == 200 and response.content else None
        if how == "other" and isinstance(body, dict) and "name" in body:
            others = [m for m in self.fake.models.values() if m["id"] != body.get("id")]
            if others:
                return httpx.Response(200, json=copy.deepcopy(others[0]))
        if how in ("twice", "hide", "drop") and kind == "list" and isinstance(body, dict) and body.get("items"):
            first = body["items"][0]
            body["items"] = body["items"][1:] if how != "twice" else body["items"] + [{**first, "id": first["id"] + 900}]
            if how == "hide" and isinstance(body.get("pagination"), dict):
                body["pagination"]["total"] -= 1
            return httpx.Response(200, json=body)
        return response


@pytest.fixture
def proxy(fake, monkeypatch):
    import gpustack_guard.wiring as connect

    wrapper = Tampering(fake)
    monkeypatch.setattr(connect, "transport_factory", lambda: httpx.MockTransport(wrapper.handle))
    return wrapper


def _snapshot(fake) -> dict[int, dict]:
    return {mid: copy.deepcopy(m) for mid, m in fake.models.items()}


def _edit(specs, name, old, new):
    path = specs / name
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _untouched_except(before: dict, fake, name: str) -> None:
    for mid, model in before.items():
        if model["name"] != name:
            assert fake.models.get(mid) == model, model["name"]


# --- one test per class ---------------------------------------------------------------------------------

def test_a_create_answered_with_another_model_stops_apply(gsg, fake, specs, proxy):
    assert gsg("apply", str(specs), "--yes", "--target", "llama-8b").code == 0
    before = _snapshot(fake)
    proxy.reset({("create", 1): "other"})
    result = gsg("apply", str(specs), "--yes", "--concurrency", "1")
    assert result.code == 1
    assert re.search(r"failed: (\S+): create: '\1': the create's answer is the model named 'llama-8b', not '\1'; "
                     + re.escape(REFUSED), result.err), result.err
    assert "Apply stopped on a failure." in result.err and "Apply complete" not in result.out
    _untouched_except(before, fake, "no such name")  # llama-8b was not written over
    assert len(fake.models) == 2  # the first create landed; nothing after it was attempted
    assert proxy.counts.get("create") == 1
    again = gsg("apply", str(specs), "--yes")
    assert again.code == 0 and "Apply complete: 2 created" in again.out, again.err


def test_a_read_answered_with_another_model_is_never_written(gsg, fake, specs, proxy):
    gsg("apply", str(specs), "--yes")
    _edit(specs, "llama-8b.yaml", "max_num_seqs: 64", "max_num_seqs: 48")
    before = _snapshot(fake)
    proxy.reset({("get", 1): "other"})
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1 and f"GET /v2/models/{fake.by_name('llama-8b')['id']} is model id " in result.err
    assert REFUSED in result.err and "update" not in proxy.counts
    assert _snapshot(fake) == before


@pytest.mark.parametrize("how,says", [
    ("other", "the answer to the update is model id"),
    ("ignore", "the re-read after the update carries 'sha256:"),
    ("partial", "after the update the server holds other values than were sent (backend_parameters)"),
])
def test_an_update_answered_for_another_model_or_not_stored_stops_before_the_restart(
        gsg, fake, specs, proxy, how, says):
    gsg("apply", str(specs), "--yes")
    _edit(specs, "llama-8b.yaml", "max_num_seqs: 64", "max_num_seqs: 48")
    before = _snapshot(fake)
    proxy.reset({("update", 1): how})
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1 and says in result.err and REFUSED in result.err, result.err
    assert "restart" not in proxy.counts
    _untouched_except(before, fake, "llama-8b")
    proxy.reset()
    assert gsg("apply", str(specs), "--yes").code == 0
    assert "--max-num-seqs=48" in fake.by_name("llama-8b")["backend_parameters"]


def test_a_list_that_names_a_model_twice_is_a_conflict_not_a_guess(gsg, fake, specs, proxy):
    gsg("apply", str(specs), "--yes")
    first = next(iter(fake.models.values()))
    before = _snapshot(fake)
    proxy.reset({("list", 1): "twice"})
    result = gsg("plan", str(specs))
    assert result.code == 1
    assert f"the server lists 2 models of this name (ids {first['id']}, {first['id'] + 900}): gsg cannot tell " \
           "which one is meant and touches none" in result.out
    proxy.reset({("list", 1): "twice"})
    assert gsg("apply", str(specs), "--yes", "--prune").code == 1
    assert _snapshot(fake) == before and "update" not in proxy.counts and "delete" not in proxy.counts


def test_a_stale_list_never_makes_a_second_deployment_of_one_name(gsg, fake, specs, proxy):
    gsg("apply", str(specs), "--yes")
    hidden = next(iter(fake.models.values()))
    before = _snapshot(fake)
    proxy.reset({("list", 1): "hide", ("list", 2): "hide"})  # the plan's list and the re-check under the lock
    result = gsg("apply", str(specs), "--yes")
    # the plan wants to create it; GPUStack refuses the name (409) and the lookup finds it is this spec's
    assert proxy.counts.get("create") == 1
    assert [m["name"] for m in fake.models.values()].count(hidden["name"]) == 1
    assert result.code == 0 and _snapshot(fake) == before, result.err


def test_a_server_that_stores_a_duplicate_name_is_caught_after_the_create(gsg, fake, specs, proxy):
    gsg("apply", str(specs), "--yes")
    hidden = next(iter(fake.models.values()))
    proxy.reset({("list", 1): "hide", ("list", 2): "hide"})  # the plan's list and the re-check under the lock
    original = fake._create

    def careless(body):  # a server without GPUStack's unique name constraint
        clash = fake.by_name(body["name"])
        if clash is not None:
            clash["name"] = "\0"
            try:
                return original(body)
            finally:
                clash["name"] = body["name"]
        return original(body)

    fake._create = careless
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1 and f"the server holds 2 models named '{hidden['name']}'" in result.err, result.err
    assert REFUSED in result.err
    plan = gsg("plan", str(specs))
    assert plan.code == 1 and "the server lists 2 models of this name" in plan.out


def test_a_delete_of_a_model_that_is_not_the_one_planned_is_refused(gsg, fake, specs, proxy):
    gsg("apply", str(specs), "--yes")
    (specs / "llama-8b.yaml").unlink()
    before = _snapshot(fake)
    proxy.reset({("get", 1): "other"})
    result = gsg("apply", str(specs), "--yes", "--prune")
    assert result.code == 1 and REFUSED in result.err and "delete" not in proxy.counts
    assert _snapshot(fake) == before


def test_a_delete_the_server_answers_but_does_not_do_is_not_success(gsg, fake, specs, proxy, monkeypatch):
    gsg("apply", str(specs), "--yes")
    (specs / "llama-8b.yaml").unlink()
    model_id = fake.by_name("llama-8b")["id"]
    monkeypatch.setattr(fake, "models", _KeepOnDelete(fake.models))
    result = gsg("apply", str(specs), "--yes", "--prune")
    assert result.code == 1
    assert f"the server answered the delete but still holds model id {model_id}" in result.err, result.err


class _KeepOnDelete(dict):
    def __delitem__(self, key):  # the fake deletes with `del`: this server forgets to
        pass


def test_a_restart_lost_after_the_update_is_not_forgotten(gsg, fake, specs, proxy):
    gsg("apply", str(specs), "--yes")
    _edit(specs, "llama-8b.yaml", "max_num_seqs: 64", "max_num_seqs: 48")
    proxy.reset({("restart", 1): "reset"})  # the server dies between the update and the restart
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1 and "failed: llama-8b: update:" in result.err
    model = fake.by_name("llama-8b")
    assert "--max-num-seqs=48" in model["backend_parameters"] and RESTART_PENDING in model["meta"]
    plan = gsg("plan", str(specs), "--detailed-exitcode")
    assert plan.code == 2
    assert "# llama-8b (specs/llama-8b.yaml) will be updated in place, then restarted (an earlier apply updated " \
           "it, but its restart was not confirmed)" in plan.out
    proxy.reset()
    applied = gsg("apply", str(specs), "--yes")
    assert applied.code == 0 and proxy.counts.get("restart") == 1
    assert RESTART_PENDING not in fake.by_name("llama-8b")["meta"]
    assert gsg("plan", str(specs), "--detailed-exitcode").code == 0


def test_a_lost_create_answer_is_found_not_duplicated(gsg, fake, specs, proxy):
    proxy.reset({("create", 1): "lost"})
    result = gsg("apply", str(specs), "--yes", "--concurrency", "1")
    assert result.code == 0 and proxy.counts["create"] == 4, result.err
    names = [m["name"] for m in fake.models.values()]
    assert len(names) == len(set(names)) == 4
    proxy.reset()
    assert gsg("plan", str(specs), "--detailed-exitcode").code == 0


# --- the property: random mistreatment never touches another deployment; the next run converges -----------

@pytest.fixture
def originals(specs):
    import shutil

    shutil.copytree(specs, specs.parent / "orig")
    return specs.parent / "orig"


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.tuples(st.sampled_from(KINDS), st.integers(1, 4)), st.sampled_from(HOW), max_size=4))
def test_random_mistreatment_never_changes_another_deployment(gsg, fake, specs, proxy, originals, plan):
    import shutil

    proxy.reset()
    fake.models.clear()
    fake.instances.clear()
    shutil.rmtree(specs)
    shutil.copytree(originals, specs)
    assert gsg("apply", str(specs), "--yes").code == 0
    fake.create_unmanaged("stranger")
    # pending work of every kind: an update with a restart, a scale, a create, a prune
    fake.by_name("llama-8b")["backend_parameters"] = ["--max-model-len=1024"]
    fake.by_name("qwen-32b")["replicas"] = 2
    del fake.models[fake.by_name("llama-70b")["id"]]
    (specs / "llama-70b-gguf.yaml").unlink()
    before = _snapshot(fake)
    proxy.reset(plan)
    gsg("apply", str(specs), "--yes", "--prune")
    during = _snapshot(fake)
    proxy.reset()
    final = gsg("apply", str(specs), "--yes", "--prune")
    assert final.code == 0, (plan, final.err)
    assert gsg("plan", str(specs), "--prune", "--detailed-exitcode").code == 0, plan
    names = [m["name"] for m in fake.models.values()]
    assert len(names) == len(set(names)) and "stranger" in names, plan
    wanted = {m["name"]: m["backend_parameters"] for m in fake.models.values()}
    # after the mistreated run each model held its own old or its own desired arguments, never another's
    for mid, model in during.items():
        old = before.get(mid)
        if old is None:  # created by the mistreated run: this spec's own arguments
            assert model["backend_parameters"] == wanted[model["name"]], plan
            continue
        assert model["name"] == old["name"], plan
        assert model["backend_parameters"] in (old["backend_parameters"], wanted.get(old["name"])), plan
        if old["name"] == "stranger":
            assert model == old, plan


def test_a_list_that_changes_between_the_plan_and_the_lock_stops_apply_before_any_write(gsg, fake, specs, proxy):
    """Another apply finished, or someone edited by hand, after this run listed the models: under the lock the
    list is read again, and a model that is not as planned stops the run with nothing written."""
    gsg("apply", str(specs), "--yes")
    hidden = next(iter(fake.models.values()))
    before = _snapshot(fake)
    proxy.reset({("list", 1): "hide"})  # planned as a create; under the lock it exists
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1 and proxy.counts.get("create") is None and proxy.counts.get("update") is None
    assert f"'{hidden['name']}' changed on the server since this apply planned it" in result.err
    assert _snapshot(fake) == before


def test_a_wait_answered_with_another_model_never_counts_it_as_ready(gsg, fake, specs, proxy):
    """Before: --wait read GET /v2/models/{id} unbound, so a proxy answering with another, ready model (here one
    of 0 replicas) made "Apply complete" while the model applied was never seen ready."""
    fake.create_unmanaged("idle", replicas=0)
    fake.ready_after_polls = 10**6  # the model applied never becomes ready on its own
    proxy.reset({("get", 1): "other"})
    result = gsg("apply", str(specs), "--yes", "--target", "llama-8b", "--wait", "--wait-timeout", "30")
    assert result.code == 1 and "Apply complete" not in result.out, result.out
    assert (f"failed: wait: 'llama-8b': GET /v2/models/{fake.by_name('llama-8b')['id']} while waiting is "
            f"model id {fake.by_name('idle')['id']}, not {fake.by_name('llama-8b')['id']}; " + REFUSED) in result.err


@pytest.mark.parametrize("command", [("plan",), ("apply", "--yes", "--prune")])
def test_a_list_page_with_a_hole_is_no_knowledge_to_plan_or_prune_by(gsg, fake, specs, proxy, command):
    """Before: a list answer leaving a model out while its own count still named it was taken whole: prune and the
    duplicate-name check judged a fleet with a model missing (here a second 'llama-8b' hides in the hole)."""
    gsg("apply", str(specs), "--yes")
    (specs / "llama-70b-gguf.yaml").unlink()
    twin = {**copy.deepcopy(fake.by_name("llama-8b")), "id": 777}
    fake.models = {777: twin, **fake.models}  # listed first: the hole
    before = _snapshot(fake)
    proxy.reset({("list", 1): "drop"})
    result = gsg(*command, str(specs))
    assert result.code == 1, result.out
    assert result.err == ("gsg: error: GET /v2/models: the server counts 5 items but its pages held 4: the list is "
                          "incomplete; try again\n")
    assert _snapshot(fake) == before and not {"create", "update", "delete"} & set(proxy.counts)
