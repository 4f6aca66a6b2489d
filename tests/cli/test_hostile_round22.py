"""Round 22 of misbehaving servers and settings, each the case gsg mishandled before, with its neighbours:
proxy variables httpx cannot use (an internal error, exit 3), a worker that lists one GPU twice (counted as two
GPUs: a TP=2 replica passed on one card), and a later GPUStack that has no /v2 API (a bare 'HTTP 404')."""

from __future__ import annotations

import pytest
from support import FLEET, REPO

PROXY_PASSWORD = "proxy-pass-4242"
PROXY_USER = "proxy-user-31"


def _no_proxies(monkeypatch):
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


@pytest.fixture
def loopback(monkeypatch, specs):
    """A healthy GPUStack on a real loopback socket: httpx reads proxy variables only without a mock transport."""
    from support.hostile_gpustack import HostileGPUStack

    _no_proxies(monkeypatch)
    with HostileGPUStack(None) as server:
        monkeypatch.setenv("GSG_URL", server.url())
        monkeypatch.setenv("GSG_API_KEY", server.fake.api_key)
        yield server


@pytest.mark.parametrize("variable, url, says", [
    ("HTTP_PROXY", "ftp://{auth}@proxy.example:3128",
     "(HTTP_PROXY=ftp://proxy.example:3128): Unknown scheme for proxy URL URL('"),
    ("ALL_PROXY", "socks5://{auth}@proxy.example:1080",
     # the output's scrub takes 'socks5://proxy' for the variable's secret value cut short: masked, defensively
     "(ALL_PROXY=********.example:1080): a SOCKS proxy needs the 'socksio' package (pip install 'httpx[socks]')"),
    ("http_proxy", "http://{auth}@[::1", "(http_proxy=http://[::1): Invalid port: ':1'"),
])
@pytest.mark.parametrize("command", [["snapshot", "--out", "fleet.yaml"], ["plan", "specs"], ["drift", "specs"],
                                     ["apply", "specs", "--yes"]])
def test_a_proxy_variable_httpx_cannot_use_is_one_line_without_its_credentials(
        gsg, loopback, monkeypatch, variable, url, says, command):
    """Before: 'gsg: internal error: ValueError: Unknown scheme for proxy URL ...' and exit 3."""
    monkeypatch.setenv(variable, url.format(auth=f"{PROXY_USER}:{PROXY_PASSWORD}"))
    result = gsg(*command)
    assert result.code == 1, result.err
    assert result.err.startswith("gsg: error: the proxy settings in the environment cannot be used ")
    assert says in result.err and len(result.err.splitlines()) == 1, result.err
    assert PROXY_PASSWORD not in result.out + result.err and PROXY_USER not in result.out + result.err
    assert loopback.requests == []  # nothing was sent


def test_a_usable_proxy_variable_is_left_to_httpx(gsg, loopback, monkeypatch):
    """The neighbour: a well-formed proxy URL is no error of its own (NO_PROXY sends the loopback direct)."""
    monkeypatch.setenv("HTTP_PROXY", f"http://{PROXY_USER}:{PROXY_PASSWORD}@proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    result = gsg("snapshot", "--out", "fleet.yaml")
    assert result.code == 0, result.err


def test_soak_with_a_proxy_variable_httpx_cannot_use_is_one_line(gsg, monkeypatch, tmp_path):
    _no_proxies(monkeypatch)
    monkeypatch.setenv("HTTP_PROXY", f"ftp://{PROXY_USER}:{PROXY_PASSWORD}@proxy.example:3128")
    result = gsg("soak", "--url", "http://127.0.0.1:9/v1", "--model", "m", "--rounds", "1", "--round-seconds", "1")
    assert result.code == 1, result.err
    assert result.err == ("gsg: error: the proxy settings in the environment cannot be used "
                          "(HTTP_PROXY=ftp://proxy.example:3128): Unknown scheme for proxy URL "
                          "URL('********[secure]@proxy.example:3128')\n")


# --- one GPU listed twice by a worker ----------------------------------------------------------------------

def _tp2_on_gpu_c(tmp_path):
    """llama-8b at TP=2, placed by label on gpu-c (two RTX 4090 in the field-notes fleet)."""
    spec = (REPO / "specs" / "llama-8b.yaml").read_text()
    path = tmp_path / "a.yaml"
    path.write_text(spec.replace("gpu_selector:\n  gpu_ids: [gpu-c:cuda:0, gpu-c:cuda:1]\n",
                                 "worker_selector: {gpu: rtx4090}\n"))
    return path


def test_a_fleet_file_listing_one_gpu_twice_is_refused_at_the_repeat(gsg, tmp_path):
    """Before: gpu-c with index 0 twice passed a TP=2 spec (0 errors): one card counted as two."""
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET.read_text().replace(
        "- {index: 1, name: NVIDIA GeForce RTX 4090, memory: {total: 24564MiB}}",
        "- {index: 0, name: NVIDIA GeForce RTX 4090, memory: {total: 24564MiB}}", 1))
    result = gsg("validate", str(_tp2_on_gpu_c(tmp_path)), "--fleet", str(fleet), "--offline")
    assert result.code == 1
    assert result.err == (f"gsg: error: {fleet}:25:21: 'clusters.0.workers.2.gpus.1.index': worker 'gpu-c' lists "
                          "GPU cuda:0 twice (gpus 0 and 1): one GPU would count as two\n")


def test_one_index_of_two_types_on_a_worker_is_two_gpus(gsg, tmp_path):
    """The neighbour: GPUStack's id is worker:type:index, so cuda:0 and rocm:0 are two GPUs."""
    fleet = tmp_path / "fleet.yaml"
    text = FLEET.read_text().replace(
        "- {index: 1, name: NVIDIA GeForce RTX 4090, memory: {total: 24564MiB}}",
        "- {index: 0, type: rocm, name: NVIDIA GeForce RTX 4090, memory: {total: 24564MiB}}", 1)
    assert "type: rocm" in text  # the edit took: gpu-c holds cuda:0 and rocm:0
    fleet.write_text(text)
    result = gsg("validate", str(_tp2_on_gpu_c(tmp_path)), "--fleet", str(fleet), "--offline")
    assert result.code == 0 and result.err.startswith("gsg: 0 errors, ")  # the fleet loads and the spec places
    assert "twice" not in result.out + result.err


@pytest.mark.parametrize("command", [["snapshot", "--out", "fleet.yaml"], ["plan", "specs"],
                                     ["validate", "specs", "--server-check"], ["apply", "specs", "--yes"]])
def test_a_live_worker_listing_one_gpu_twice_is_one_line_naming_the_endpoint(gsg, fake, specs, command):
    devices = fake.workers[2]["status"]["gpu_devices"]  # gpu-c
    devices[1]["index"] = 0
    result = gsg(*command)
    assert result.code == 1, result.err
    assert result.err == ("gsg: error: GET /v2/workers: item 2: worker 'gpu-c' lists GPU cuda:0 twice (GPUs 0 and "
                          "1 of status.gpu_devices): one GPU would count as two; refusing the fleet\n")
    assert not any(method in ("POST", "PUT", "DELETE") for method, _ in fake.log)


def test_an_unmeasured_gpu_does_not_count_as_a_repeat(gsg, fake, specs):
    """A GPU without memory is skipped (books nothing), so its index is not held against the next one."""
    devices = fake.workers[2]["status"]["gpu_devices"]
    devices.insert(0, {**devices[0], "memory": {"total": 0, "used": 0, "allocated": 0}})
    result = gsg("snapshot", "--out", "fleet.yaml")
    assert result.code == 0, result.err


# --- a GPUStack without the /v2 API ------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["v3.1.0", "v2.3.0"])
@pytest.mark.parametrize("command", [["snapshot", "--out", "fleet.yaml"], ["plan", "specs"],
                                     ["apply", "specs", "--yes"], ["drift", "specs"]])
def test_a_server_answering_404_on_v2_says_so_in_one_line(gsg, fake, specs, monkeypatch, version, command):
    """Before: 'gsg: error: GET /v2/users/me: HTTP 404 Not Found: Not Found' (a future GPUStack, or a URL with a
    path prefix the proxy does not forward)."""
    import httpx

    fake.version = version
    handled = fake._handle

    def without_v2(request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/v2/"):
            return httpx.Response(404, json={"detail": "Not Found"})
        return handled(request)

    monkeypatch.setattr(fake, "_handle", without_v2)
    result = gsg(*command)
    assert result.code == 1
    assert result.err == (f"gsg: error: http://gpustack.test: GPUStack {version} answers HTTP 404 on /v2/users/me: "
                          "it does not serve the /v2 API gsg speaks (GPUStack 2.x), or the URL is not the server's "
                          "root\n")


def test_a_404_after_the_first_v2_call_keeps_its_endpoint(gsg, fake, specs, monkeypatch):
    """The neighbour: /v2/users/me works, a later list 404s: that endpoint is named as before."""
    import httpx

    handled = fake._handle

    def workers_missing(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v2/workers":
            return httpx.Response(404, json={"detail": "Not Found"})
        return handled(request)

    monkeypatch.setattr(fake, "_handle", workers_missing)
    result = gsg("snapshot", "--out", "fleet.yaml")
    assert (result.code, result.err) == (1, "gsg: error: GET /v2/workers: HTTP 404 Not Found: Not Found\n")


# --- a server URL with a query (an auth gateway's token) ---------------------------------------------------

@pytest.mark.parametrize("url", ["http://admin:pw-q-1@gpustack.test/?token=tok-q-12345&x=",
                                 "http://gpustack.test?token=tok-q-12345&x=#frag"])
def test_a_server_url_query_is_sent_with_every_request_and_the_path_stays_the_apis(url):
    """Before: httpx appended each path to the URL's text, so every request went to '/?token=********/v2/models'
    (mask_url's form: the token itself was never sent)."""
    import httpx

    from gpustack_guard.adapters.gpustack.client import GPUStackClient

    seen: list[httpx.URL] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        if request.url.path == "/version":
            return httpx.Response(200, json={"version": "v2.3.0"})
        return httpx.Response(200, json={"items": [], "pagination": {"totalPage": 1}})

    client = GPUStackClient(url, "k", transport=httpx.MockTransport(answer))
    client.version()
    client.models(cluster_id=3)
    assert [(u.path, u.params.multi_items()) for u in seen] == [
        ("/version", [("token", "tok-q-12345"), ("x", "")]),
        ("/v2/models", [("token", "tok-q-12345"), ("x", ""), ("cluster_id", "3"), ("page", "1"),
                        ("perPage", str(client.limits.page_size))])]
    assert all(u.userinfo == b"" and u.fragment == "" for u in seen)
    assert client.base_url.startswith("http://gpustack.test") and "tok-q-12345" not in client.base_url


def test_a_gateway_token_in_the_server_url_reaches_the_server_and_is_never_shown(gsg, loopback, monkeypatch,
                                                                                  tmp_path):
    monkeypatch.setenv("GSG_URL", loopback.url() + "/?token=tok-q-67890")
    result = gsg("snapshot", "--out", str(tmp_path / "f.yaml"))
    assert result.code == 0, result.err
    assert all("token=tok-q-67890" in path for _method, path in loopback.requests), loopback.requests
    assert "/v2/workers" in {path.split("?")[0] for _method, path in loopback.requests}
    assert "tok-q-67890" not in result.out + result.err + (tmp_path / "f.yaml").read_text()


# --- a fleet with no cluster at all --------------------------------------------------------------------------

NO_CLUSTER = ("error GSG008 cluster [llama-8b]: the fleet has no cluster: nothing can be placed (an empty snapshot, "
              "or a server that lists no clusters)")


def test_an_empty_fleet_file_is_not_called_several_clusters(gsg, tmp_path):
    """Before: 'cluster_name is required: the fleet has several clusters (none)', fix: add 'cluster_name:'."""
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("clusters: []\n")
    spec = tmp_path / "llama-8b.yaml"
    spec.write_text((REPO / "specs" / "llama-8b.yaml").read_text())
    result = gsg("validate", str(spec), "--fleet", str(fleet), "--offline")
    assert result.code == 1
    assert result.out.splitlines()[0] == f"{spec}:3:7: {NO_CLUSTER}"
    assert "several" not in result.out and "fix:" not in result.out


def test_a_server_answering_the_same_empty_json_everywhere_is_no_cluster_for_plan_and_apply(gsg, fake, specs,
                                                                                            monkeypatch):
    """A catch-all mock: one JSON object for every path (a version, an empty list, a model's id and name)."""
    import httpx

    def same(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"version": "v2.3.0", "items": [], "pagination": {"totalPage": 1},
                                         "id": 1, "name": "llama-8b"})

    monkeypatch.setattr(fake, "_handle", same)
    for command in (["plan", "specs"], ["apply", "specs", "--yes"], ["validate", "specs", "--server-check"]):
        result = gsg(*command)
        assert result.code == 1, (command, result.err)
        assert f"specs/llama-8b.yaml:3:7: {NO_CLUSTER}" in result.out + result.err, (command, result.out)
    assert fake.log == []  # the catch-all answered; the fake's own models were never touched


def test_a_cluster_name_on_an_empty_fleet_is_still_an_unknown_cluster(gsg, tmp_path):
    """The neighbour: a spec naming its cluster is told that cluster is not there."""
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("clusters: []\n")
    spec = tmp_path / "a.yaml"
    spec.write_text((REPO / "specs" / "llama-8b.yaml").read_text().replace("name: llama-8b\n",
                                                                           "name: llama-8b\ncluster_name: prod\n", 1))
    result = gsg("validate", str(spec), "--fleet", str(fleet), "--offline")
    assert "error GSG008 cluster [llama-8b]: cluster 'prod' is not in the fleet (known: none)" in result.out


# --- FastAPI's validation errors ---------------------------------------------------------------------------

FASTAPI_422 = {"detail": [
    {"type": "missing", "loc": ["body", "source"], "msg": "Field required",
     "input": {"name": "llama-70b-q4", "env": {"HF_TOKEN": "hf_echoed_secret_0001"}}},
    {"type": "int_parsing", "loc": ["body", "replicas"], "msg": "Input should be a valid integer", "input": "two"}]}


@pytest.mark.parametrize("body, says", [
    (FASTAPI_422, "HTTP 422 Unprocessable Entity: source: Field required; replicas: Input should be a valid integer"),
    ({"detail": FASTAPI_422["detail"] * 2}, "HTTP 422 Unprocessable Entity: source: Field required; replicas: Input "
                                            "should be a valid integer; source: Field required (+1 more)"),
    ({"detail": "Model name already exists"}, "HTTP 422 Unprocessable Entity: Model name already exists"),
    ({"detail": {"unexpected": ["shape"]}}, "HTTP 422 Unprocessable Entity"),
    ({}, "HTTP 422 Unprocessable Entity"),
])
def test_a_validation_error_names_fields_and_messages_never_the_echoed_input(gsg, fake, specs, monkeypatch, body,
                                                                             says):
    """Before: Python's repr of FastAPI's list, cut at 300 characters: "[{'type': 'missing', 'loc': ['body', ...],
    'input': {...}}]", the request's own values echoed."""
    import json

    import httpx

    handled = fake._handle

    def refusing(request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path == "/v2/models" and \
                json.loads(request.content).get("name") == "llama-70b-q4":  # not the apply lock's lease
            return httpx.Response(422, json=body)
        return handled(request)

    monkeypatch.setattr(fake, "_handle", refusing)
    result = gsg("apply", "specs", "--yes")
    assert result.code == 1
    failed = [line for line in result.err.splitlines() if line.startswith("  failed: ")]
    assert failed == [f"  failed: llama-70b-q4: create: POST /v2/models: {says}"], result.err
    assert "'input'" not in result.err and "hf_echoed" not in result.err and "{'" not in result.err


# --- a GPUStack run from source ------------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["0.0.0", "v0.0.0"])
def test_a_development_build_reporting_0_0_0_is_served_as_the_newest(gsg, fake, specs, tmp_path, version):
    """GPUStack from source reports gpustack/__init__.py's placeholder '0.0.0'. Before: 'GPUStack 0.0.0 is not
    supported: gsg speaks the /v2 API of GPUStack 2.x' for every command."""
    fake.version = version
    assert gsg("snapshot", "--out", "fleet.yaml").code == 0
    assert gsg("apply", "specs", "--yes").code == 0
    exported = gsg("export", "--out", str(tmp_path / "exported"))
    assert exported.code == 0, exported.err
    assert ("POST", "/v2/models/export") in fake.log  # the export endpoint, as on 2.3 and later


@pytest.mark.parametrize("version", ["v0.7.1", "0.0.1", "v1.9.0"])
def test_a_real_0_x_or_1_x_release_is_still_refused(gsg, fake, specs, version):
    fake.version = version
    result = gsg("snapshot", "--out", "fleet.yaml")
    assert (result.code, result.err) == (1, f"gsg: error: http://gpustack.test: GPUStack {version} is not supported: "
                                            "gsg speaks the /v2 API of GPUStack 2.x\n")
