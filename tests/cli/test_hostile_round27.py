"""Round 27 of misbehaving servers, each the case gsg mishandled before, with its neighbours: a list paged by Link
headers (RFC 8288) or by pages that carry no count, read as its first page (a plan showed running models as to be
created, drift and prune judged part of the fleet); a cluster the server marks deleted (`deleted_at`) taken as a
write target (creates landed in it) or, recreated under its name, refused as a duplicate; states in another case
('ERROR', 'Running', 'Ready') read as some other state (--wait polled an instance in error until its timeout, verify
skipped running instances, validate found no ready worker)."""

from __future__ import annotations

import json

import httpx
import pytest
from support.fake_gpustack import in_front

LINK_REFUSAL = ("gsg: error: GET /v2/models: the server pages this list with Link headers (rel=\"next\"), not "
                "GPUStack's 'pagination': gsg does not follow them and the first page is not the whole list; "
                "refusing to act on part of it")
WRITES = ("POST", "PUT", "DELETE")


def _writes(calls) -> list:
    return [c for c in calls if c[0] in WRITES]


def _one_line(result) -> str:
    lines = [line for line in result.err.splitlines() if line.startswith("gsg: error:")]
    assert len(lines) == 1 and "Traceback" not in result.err, result.err
    return lines[0]


# --- a list paged by Link headers, or by pages without a count ---------------------------------------------------

def _link_paged(path: str, link: str):
    """`path` answered as a bare list of the page asked for, the Link header `link` on every page but the last."""
    def change(request, answer):
        if request.method != "GET" or request.url.path != path or answer.status_code != 200:
            return None
        body = answer.json()
        last = body["pagination"]["page"] >= body["pagination"]["totalPage"]
        return httpx.Response(200, json=body["items"], headers={} if last else {"Link": link})
    return change


@pytest.mark.parametrize("link", [
    '<http://gpustack.test/v2/models?page=2&perPage=2>; rel="next"',
    "<http://gpustack.test/v2/models?page=2&perPage=2>; rel=next",
    '<https://elsewhere.example/v2/models?page=2>; rel="next last"',
    '<http://gpustack.test/v2/models?page=1>; rel="first", <http://gpustack.test/v2/models?page=2>; REL="Next"',
])
@pytest.mark.parametrize("command", [("plan",), ("drift",), ("apply", "--yes"), ("apply", "--yes", "--prune")])
def test_a_model_list_paged_by_link_headers_is_refused_before_any_write(gsg, fake, specs, monkeypatch, link,
                                                                       command):
    assert gsg("apply", str(specs), "--yes").code == 0
    before = json.dumps(fake.models, sort_keys=True)
    monkeypatch.setenv("GSG_PAGE_SIZE", "2")  # 4 models: two pages
    calls = in_front(fake, monkeypatch, then=_link_paged("/v2/models", link))
    result = gsg(command[0], str(specs), *command[1:])
    assert result.code == 1 and _one_line(result) == LINK_REFUSAL
    assert _writes(calls) == [] and json.dumps(fake.models, sort_keys=True) == before


@pytest.mark.parametrize("path", ["/v2/clusters", "/v2/workers", "/v2/model-instances"])
def test_the_other_lists_paged_by_link_headers_are_refused_too(gsg, fake, specs, monkeypatch, path):
    assert gsg("apply", str(specs), "--yes").code == 0
    fake.add_cluster("staging")  # two clusters: two pages of one
    monkeypatch.setenv("GSG_PAGE_SIZE", "1")
    calls = in_front(fake, monkeypatch, then=_link_paged(path, f'<http://gpustack.test{path}?page=2>; rel="next"'))
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1 and _one_line(result) == LINK_REFUSAL.replace("/v2/models", path)
    assert _writes(calls) == []


@pytest.mark.parametrize("link", ['<http://gpustack.test/v2/models?page=1>; rel="prev"',
                                  '<http://gpustack.test/v2/models?page=1>; rel="first last"',
                                  '<http://gpustack.test/docs>; rel="nextgen"'])
def test_a_link_header_that_names_no_next_page_is_no_refusal(gsg, fake, specs, monkeypatch, link):
    assert gsg("apply", str(specs), "--yes").code == 0

    def change(request, answer):
        if request.method == "GET" and request.url.path == "/v2/models" and answer.status_code == 200:
            return httpx.Response(200, json=answer.json()["items"], headers={"Link": link})
        return None
    in_front(fake, monkeypatch, then=change)
    result = gsg("plan", str(specs))
    assert result.code == 0 and "No changes. Live deployments match the specs." in result.out


def _uncounted(fake, path: str, own_page_size: int | None = None, ignore_page: bool = False, envelope: bool = False):
    """`path` paged without a count: a bare list (or {"items"} alone) of the page asked for, of `own_page_size`
    items whatever perPage says, or the whole list whatever page is asked (`ignore_page`)."""
    def change(request, answer):
        if request.method != "GET" or request.url.path != path or answer.status_code != 200:
            return None
        page = int(request.url.params["page"])
        size = own_page_size or int(request.url.params["perPage"])
        url = request.url.copy_set_param("page", "1").copy_set_param("perPage", "1000")
        everything = fake.handle(httpx.Request("GET", url, headers=request.headers)).json()["items"]
        items = everything if ignore_page else everything[(page - 1) * size: page * size]
        return httpx.Response(200, json={"items": items} if envelope else items)
    return change


@pytest.mark.parametrize("shape", [
    dict(),  # perPage honoured, no count
    dict(own_page_size=1),  # pages of its own size, shorter than asked
    dict(own_page_size=3, envelope=True),  # {"items"} without 'pagination'
])
def test_a_model_list_paged_without_a_count_is_read_to_its_end(gsg, fake, specs, monkeypatch, shape):
    assert gsg("apply", str(specs), "--yes").code == 0
    monkeypatch.setenv("GSG_PAGE_SIZE", "2")
    calls = in_front(fake, monkeypatch, then=_uncounted(fake, "/v2/models", **shape))
    result = gsg("plan", str(specs))
    assert result.code == 0 and "No changes. Live deployments match the specs." in result.out
    # every page, and one more that brought nothing: 4 models in pages of 2, 1 or 3
    pages = {None: 2, 1: 4, 3: 2}[shape.get("own_page_size")]
    assert calls.count(("GET", "/v2/models")) == pages + 1


def test_a_prune_reads_a_list_paged_without_a_count_whole(gsg, fake, specs, monkeypatch):
    assert gsg("apply", str(specs), "--yes").code == 0
    (specs / "llama-8b.yaml").unlink()  # the third model listed: on the second page
    monkeypatch.setenv("GSG_PAGE_SIZE", "2")
    calls = in_front(fake, monkeypatch, then=_uncounted(fake, "/v2/models"))
    result = gsg("apply", str(specs), "--yes", "--prune")
    assert result.code == 0 and "Apply complete: 0 created, 0 updated, 0 replaced, 1 deleted." in result.out
    assert sorted(m["name"] for m in fake.models.values()) == ["llama-70b", "llama-70b-q4", "qwen-32b"]
    assert [c[0] for c in _writes(calls)] == ["POST", "DELETE", "DELETE"]  # the lock, the model, the lock


def test_a_server_that_ignores_page_and_gives_no_count_is_read_once_more_and_ends(gsg, fake, specs, monkeypatch):
    assert gsg("apply", str(specs), "--yes").code == 0
    monkeypatch.setenv("GSG_PAGE_SIZE", "2")
    calls = in_front(fake, monkeypatch, then=_uncounted(fake, "/v2/models", ignore_page=True))
    result = gsg("plan", str(specs))
    assert result.code == 0 and "No changes. Live deployments match the specs." in result.out
    assert calls.count(("GET", "/v2/models")) == 2


def test_an_uncounted_list_that_never_ends_stops_at_the_page_limit(monkeypatch):
    from gpustack_guard.adapters.gpustack.client import ApiError, GPUStackClient, Limits

    asked: list[int] = []

    def endless(request: httpx.Request) -> httpx.Response:
        page = int(request.url.params["page"])
        asked.append(page)
        return httpx.Response(200, json=[{"id": page, "name": f"m{page}"}])

    client = GPUStackClient("http://gpustack.test", "k", transport=httpx.MockTransport(endless),
                            limits=Limits(max_list_pages=50))
    with pytest.raises(ApiError) as caught:
        client.list_all("/v2/models")
    assert str(caught.value) == "GET /v2/models: more than 50 full pages and no end (GSG_MAX_LIST_PAGES)"
    assert asked == list(range(1, 51))


# --- a cluster the server marks deleted ---------------------------------------------------------------------------

def _deleted_and_recreated(fake) -> tuple[int, int]:
    """'prod' soft-deleted (GPUStack's `deleted_at`) and created again under its name, its workers moved over."""
    old = fake.clusters[0]
    old["deleted_at"] = "2026-12-01T10:00:00Z"
    new = fake.add_cluster("prod")
    for worker in fake.workers:
        worker["cluster_id"] = new
    return old["id"], new


def test_a_create_never_lands_in_a_deleted_cluster_recreated_under_its_name(gsg, fake, specs, monkeypatch):
    old, new = _deleted_and_recreated(fake)
    sent: list = []

    def change(request, answer):
        if request.method == "POST" and request.url.path == "/v2/models":
            sent.append(json.loads(request.content)["cluster_id"])
        return None
    in_front(fake, monkeypatch, then=change)
    result = gsg("apply", str(specs), "--yes", "--no-lock")
    assert result.code == 0 and "Apply complete: 4 created, 0 updated, 0 replaced, 0 deleted." in result.out
    assert sent == [new] * 4 and {m["cluster_id"] for m in fake.models.values()} == {new} and old != new
    assert "No changes. Live deployments match the specs." in gsg("plan", str(specs)).out


def test_a_deleted_cluster_alone_is_no_cluster_to_write_to(gsg, fake, specs, monkeypatch):
    fake.clusters[0]["deleted_at"] = "2026-12-01T10:00:00Z"
    calls = in_front(fake, monkeypatch, then=lambda request, answer: None)
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1 and "gsg: apply blocked: 4 validation error(s)" in result.err
    assert "error GSG008 cluster [llama-8b]: the fleet has no cluster: nothing can be placed" in result.err
    assert _writes(calls) == [] and fake.models == {}


def test_a_deleted_cluster_with_a_wrong_deleted_at_is_one_line(gsg, fake, specs, monkeypatch):
    fake.clusters[0]["deleted_at"] = 1764583200
    result = gsg("plan", str(specs))
    assert result.code == 1
    assert _one_line(result) == "gsg: error: GET /v2/clusters: item 0: field 'deleted_at' is an integer, expected text"


def test_export_of_a_cluster_recreated_under_its_name_reads_the_live_one(gsg, fake, specs, monkeypatch, tmp_path):
    assert gsg("apply", str(specs), "--yes").code == 0
    old, new = _deleted_and_recreated(fake)
    asked: list = []

    def change(request, answer):
        if request.url.path in ("/v2/models", "/v2/models/export"):
            asked.append(request.url.params.get("cluster_id") or json.loads(request.content or b"{}").get("cluster_id"))
        return None
    in_front(fake, monkeypatch, then=change)
    result = gsg("export", "--cluster", "prod", "--out", str(tmp_path / "out"))
    assert result.code == 0, result.err
    assert asked and set(map(str, asked)) == {str(new)}


# --- states in another case ------------------------------------------------------------------------------------

# (apply --wait on a state in another case: tests/cli/test_plan_apply.py, test_wait_stops_early_on_an_instance_in_error)

@pytest.mark.parametrize("state", ["ERROR", "Error"])
def test_drift_sees_an_instance_in_error_in_another_case(gsg, fake, specs, state):
    assert gsg("apply", str(specs), "--yes").code == 0
    next(i for i in fake.instances.values() if i["model_name"] == "llama-8b")["state"] = state
    result = gsg("drift", str(specs), "--detailed-exitcode", "-o", "json")
    doc = json.loads(result.out)
    assert (result.code, doc["sync"], doc["health"]) == (4, "Synced", "Degraded")


@pytest.mark.parametrize("state", ["READY", "Ready"])
def test_workers_ready_in_another_case_are_ready(gsg, fake, specs, state):
    for worker in fake.workers:
        worker["state"] = state
    result = gsg("plan", str(specs))
    assert result.code == 0 and "Plan: 4 to create, 0 to update, 0 to replace, 0 to delete." in result.out



@pytest.mark.parametrize("state", ["RUNNING", "Running"])
def test_verify_reads_the_log_of_an_instance_running_in_another_case(gsg, fake, tmp_path, monkeypatch, state):
    from test_verify_live import L40S_LOG, deploy, tuned

    monkeypatch.chdir(tmp_path)
    (iid,) = deploy(fake, tmp_path, tuned("0.78"))
    fake.instances[iid]["state"] = state
    fake.instance_logs[iid] = L40S_LOG
    result = gsg("verify", "specs/")
    assert result.code == 0, result.out
    assert result.err.strip() == ("gsg: verify: 1 of 1 instance(s) verified in 1 deployment(s), 0 not verified, "
                                  "0 not running, 0 finding(s): pass")


def test_export_of_a_cluster_name_two_live_clusters_hold_is_one_line(gsg, fake, specs, tmp_path):
    assert gsg("apply", str(specs), "--yes").code == 0
    fake.add_cluster("prod")
    result = gsg("export", "--cluster", "prod", "--out", str(tmp_path / "out"))
    assert result.code == 1 and not (tmp_path / "out").exists()
    assert _one_line(result) == ("gsg: error: GET /v2/clusters: 2 clusters are named 'prod' (ids 1, 11): gsg cannot "
                                 "tell which one --cluster means; nothing written")
