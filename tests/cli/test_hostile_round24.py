"""Round 24 of misbehaving servers, each the case gsg mishandled before, with its neighbour: a worker listed twice
in a cluster (its GPU ids collide: specs were checked against the other worker's GPUs)."""

from __future__ import annotations

import pytest

RTX4090 = ("NVIDIA GeForce RTX 4090", 24564 * 1024**2)
TWICE = ("gsg: error: GET /v2/workers: items 0 and 4: worker 'gpu-a' is listed twice in cluster 'prod': their GPU "
         "ids would collide; refusing the fleet (try again)\n")


@pytest.mark.parametrize("command", [["snapshot", "--out", "fleet.yaml"], ["plan", "specs"], ["drift", "specs"],
                                     ["apply", "specs", "--yes"], ["validate", "specs", "--server-check"],
                                     ["verify", "specs"]])
def test_a_worker_listed_twice_in_a_cluster_is_one_line_and_nothing_is_written(gsg, fake, specs, tmp_path,
                                                                                command):
    """GPUStack keeps worker names unique in a cluster (one registering again while the list is read shows it
    twice). Before: plan and apply checked llama-70b's gpu-a:cuda:0..3 (four A6000) against the second gpu-a's
    RTX 4090 ('no memory left for the KV cache' on a spec that fits), and snapshot wrote a fleet file that gsg's
    own loader refuses."""
    fake.add_worker(fake.clusters[0]["id"], "gpu-a", [RTX4090], {"gpu": "rtx4090"})
    result = gsg(*command)
    assert (result.code, result.err) == (1, TWICE)
    assert not any(method in ("POST", "PUT", "DELETE") and path != "/v2/model-evaluations"
                   for method, path in fake.log), fake.log
    assert not (tmp_path / "fleet.yaml").exists()


def test_one_worker_name_in_two_clusters_is_two_workers(gsg, fake, specs, tmp_path):
    """The neighbour: worker names are unique per cluster, not across clusters."""
    staging = fake.add_cluster("staging")
    fake.add_worker(staging, "gpu-a", [RTX4090], {"gpu": "rtx4090"})
    result = gsg("snapshot", "--out", "fleet.yaml")
    assert (result.code, result.err) == (0, "gsg: wrote fleet.yaml: 2 cluster(s), 5 worker(s), 13 GPU(s)\n")
    from gpustack_guard.adapters.files.fleet_file import load_fleet

    fleet = load_fleet("fleet.yaml")  # and gsg's own loader reads it
    assert [(c.name, [w.name for w in c.workers]) for c in fleet.clusters] == [
        ("prod", ["gpu-a", "gpu-b", "gpu-c", "gpu-d"]), ("staging", ["gpu-a"])]


# --- gsg soak's key and a reference on another host -----------------------------------------------------------

OUR_KEY, REFERENCE_KEY = "sk-ours-0123456789", "sk-reference-9876543210"


@pytest.fixture
def two_engines():
    from support.soak_fakes import FakeServer

    ours = FakeServer("stable", seed=1, api_key=OUR_KEY).start_in_thread()
    reference = FakeServer("stable", seed=2).start_in_thread()
    try:
        yield ours, reference
    finally:
        ours.stop_thread()
        reference.stop_thread()


def _soak(gsg, ours, reference_url):
    return gsg("soak", "--url", ours.url, "--model", "qwen3-8b", "--reference-url", reference_url, "--rounds", "1",
               "--round-seconds", "0.5", "--concurrency", "1", "--prompt-tokens", "16", "--max-tokens", "4")


def test_the_endpoints_key_never_goes_to_a_reference_on_another_host(gsg, two_engines, monkeypatch):
    """Before: --url's key went to every request of --reference-url, whatever host it named (the README's own
    example sends a GPUStack key to another machine over plain HTTP)."""
    ours, reference = two_engines
    monkeypatch.setenv("GSG_API_KEY", OUR_KEY)
    result = _soak(gsg, ours, reference.url)
    assert result.code == 0, result.err
    assert ours.seen_auth == {f"Bearer {OUR_KEY}"} and reference.seen_auth == set()


def test_a_reference_gets_its_own_key_from_the_environment_or_a_file(gsg, two_engines, monkeypatch, tmp_path):
    ours, reference = two_engines
    monkeypatch.setenv("GSG_API_KEY", OUR_KEY)
    monkeypatch.setenv("GSG_REFERENCE_API_KEY", REFERENCE_KEY)
    result = _soak(gsg, ours, reference.url)
    assert result.code == 0 and REFERENCE_KEY not in result.out + result.err, result.err
    assert reference.seen_auth == {f"Bearer {REFERENCE_KEY}"}
    monkeypatch.delenv("GSG_REFERENCE_API_KEY")
    (tmp_path / "ref.key").write_text("sk-from-a-file-1111\n")
    (tmp_path / "ref.key").chmod(0o600)
    result = gsg("soak", "--url", ours.url, "--model", "qwen3-8b", "--reference-url", reference.url, "--rounds", "1",
                 "--round-seconds", "0.5", "--concurrency", "1", "--prompt-tokens", "16", "--max-tokens", "4",
                 "--reference-api-key-file", str(tmp_path / "ref.key"))
    assert result.code == 0, result.err
    assert reference.seen_auth == {f"Bearer {REFERENCE_KEY}", "Bearer sk-from-a-file-1111"}


def test_a_reference_on_the_endpoints_origin_gets_its_key(gsg, two_engines, monkeypatch):
    """The neighbour: another model behind the same gateway (scheme, host and port) is the same server."""
    ours, _ = two_engines
    monkeypatch.setenv("GSG_API_KEY", OUR_KEY)
    result = _soak(gsg, ours, ours.url + "/v1")
    assert result.code == 0, result.err
    assert ours.seen_auth == {f"Bearer {OUR_KEY}"}


def test_a_reference_that_refuses_every_request_of_round_1_is_one_line_naming_it(gsg, two_engines, monkeypatch):
    """Before: a reference answering 401 to all was read as a control that saw nothing, and the run went on."""
    ours, reference = two_engines
    reference.api_key = REFERENCE_KEY
    monkeypatch.setenv("GSG_API_KEY", OUR_KEY)
    result = _soak(gsg, ours, reference.url)
    assert result.code == 1
    assert result.err.splitlines()[-1] == (
        f"gsg: error: {reference.url}/v1/chat/completions: HTTP 401 for every request of round 1 (check "
        "--reference-url, its key: --reference-api-key-file or GSG_REFERENCE_API_KEY, and --reference-model)")
    assert OUR_KEY not in result.out + result.err
