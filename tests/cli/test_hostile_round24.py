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
