"""A write bound to its cluster: a server that answers with, or stores, the model in another cluster than the one
sent (a cluster id that does not match) stops apply at that step. Before, a spec without `cluster_name:` compared no
cluster field, so a model stored in another or an unknown cluster was reported created, and every later plan said
"No changes"."""

import copy

import pytest

REFUSED = "refusing to go on (nothing more is written)"
ELSEWHERE = 77  # a cluster id the server does not list


def _misplace(fake, monkeypatch, *, answer: bool, store: bool, method: str = "_create"):
    original = getattr(fake, method)

    def handler(*args):
        response = original(*args)
        if response.status_code != 200:
            return response
        public = response.json()  # as the server stored it, before the move
        if store:
            fake.models[public["id"]]["cluster_id"] = ELSEWHERE
        if answer:
            public["cluster_id"] = ELSEWHERE
        return type(response)(200, json=public)

    monkeypatch.setattr(fake, method, handler)


@pytest.mark.parametrize("answer, store, says", [
    (True, True, "the create's answer is in cluster id 77, not {cid}"),
    (True, False, "the create's answer is in cluster id 77, not {cid}"),
    (False, True, "the re-read after the create is in cluster id 77, not {cid}"),
])
def test_a_create_answered_or_stored_in_another_cluster_stops_apply(gsg, fake, specs, monkeypatch, answer, store,
                                                                   says):
    cid = fake.clusters[0]["id"]
    _misplace(fake, monkeypatch, answer=answer, store=store)
    result = gsg("apply", str(specs), "--yes", "--concurrency", "1")
    assert result.code == 1, result.err
    assert says.format(cid=cid) in result.err and REFUSED in result.err
    assert len(fake.models) == 1  # the first create landed; nothing after it was attempted
    assert "Traceback" not in result.err


@pytest.mark.parametrize("answer, store, says", [
    (True, True, "the answer to the update is in cluster id 77, not {cid}"),
    (True, False, "the answer to the update is in cluster id 77, not {cid}"),
    (False, True, "the re-read after the update is in cluster id 77, not {cid}"),
])
def test_an_update_that_moves_the_model_to_another_cluster_stops_before_the_restart(
        gsg, fake, specs, monkeypatch, answer, store, says):
    assert gsg("apply", str(specs), "--yes").code == 0
    cid = fake.clusters[0]["id"]
    path = specs / "llama-8b.yaml"
    path.write_text(path.read_text().replace("max_num_seqs: 64", "max_num_seqs: 48"))
    _misplace(fake, monkeypatch, answer=answer, store=store, method="_update")
    restarts = []
    monkeypatch.setattr(fake, "_restart", lambda model: restarts.append(model["id"]))
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 1 and says.format(cid=cid) in result.err and REFUSED in result.err, result.err
    assert restarts == []


def test_a_write_in_the_cluster_sent_still_succeeds(gsg, fake, specs):
    result = gsg("apply", str(specs), "--yes")
    assert result.code == 0 and "Apply complete: 4 created" in result.out
    assert {m["cluster_id"] for m in fake.models.values()} == {fake.clusters[0]["id"]}
    before = copy.deepcopy(fake.models)
    assert gsg("apply", str(specs), "--yes").code == 0 and fake.models.keys() == before.keys()
