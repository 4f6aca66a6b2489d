"""A server that ignores a list's filter (cluster_id, model_id) hands over other clusters' or models' objects. Before,
`export --cluster` wrote spec files for another cluster's models, and `apply --wait` judged another model's
instances (an error or a restart there failed this apply under this model's name). Now the list is refused, with
one line naming the endpoint, before anything is written."""

import httpx
import pytest
import respx

from gpustack_guard.adapters.gpustack.client import ApiError, GPUStackClient

BASE = "http://gpustack.test"


def _ignoring(fake, monkeypatch):
    original = fake._list

    def listed(items, query):
        return original(items, {k: v for k, v in query.items() if k not in ("cluster_id", "model_id")})

    monkeypatch.setattr(fake, "_list", listed)


def test_export_of_one_cluster_refuses_a_list_holding_another_clusters_models(gsg, fake, tmp_path, monkeypatch):
    home = fake.clusters[0]["name"]
    other = fake.add_cluster("elsewhere")
    fake.create_unmanaged("home-model")
    fake.create_unmanaged("other-cluster-model", cluster_id=other)
    kept = gsg("export", "--cluster", home, "--out", str(tmp_path / "ok"))  # the filter honoured: one cluster's
    assert kept.code == 0, kept.err
    assert sorted(p.name for p in (tmp_path / "ok").iterdir()) == ["home-model.yaml"]

    _ignoring(fake, monkeypatch)
    result = gsg("export", "--cluster", home, "--out", str(tmp_path / "out"))
    assert result.code == 1, result.out
    assert f"GET /v2/models: asked for cluster_id={fake.clusters[0]['id']} but page 1 lists an item with cluster_id " \
           f"{other}: the server ignored the filter; refusing to act on that list" in result.err
    assert "Traceback" not in result.err
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def _instances(items: list):
    def answer(request):
        return httpx.Response(200, json={"items": items, "pagination": {"totalPage": 1}})
    return answer


@pytest.mark.parametrize("items, outcome", [
    ([{"id": 1, "model_id": 7}, {"id": 2, "model_id": 7}], [1, 2]),
    ([{"id": 1}, {"id": 2, "model_id": None}], [1, 2]),  # a server that leaves the field out: not checked
    ([{"id": 1, "model_id": 7}, {"id": 2, "model_id": 8}],
     "asked for model_id=7 but page 1 lists an item with model_id 8"),
    ([{"id": 1, "model_id": "7"}], "asked for model_id=7 but page 1 lists an item with model_id text"),
    ([{"id": 1, "model_id": 7, "cluster_id": 3}], "asked for cluster_id=2 but page 1 lists an item with cluster_id 3"),
])
@respx.mock
def test_an_instance_list_must_not_contradict_its_filters(items, outcome):
    respx.get(f"{BASE}/v2/model-instances").mock(side_effect=_instances(items))
    client = GPUStackClient(BASE, "k")
    if isinstance(outcome, list):
        assert [i["id"] for i in client.model_instances(cluster_id=2, model_id=7)] == outcome
        return
    with pytest.raises(ApiError) as exc:
        client.model_instances(cluster_id=2, model_id=7)
    assert str(exc.value) == f"GET /v2/model-instances: {outcome}: the server ignored the filter; refusing to act " \
                             "on that list"


@respx.mock
def test_an_unfiltered_list_is_not_checked():
    respx.get(f"{BASE}/v2/models").mock(side_effect=_instances([{"id": 1, "name": "a", "cluster_id": 1},
                                                                 {"id": 2, "name": "b", "cluster_id": 2}]))
    assert [m["id"] for m in GPUStackClient(BASE, "k").models()] == [1, 2]
