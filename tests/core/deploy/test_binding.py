"""The pure checks that bind a write to its target: exact messages, and the near misses that pass."""

import pytest

from gpustack_guard.core.deploy.binding import mismatch, one_of_name, taken_id

MARK = {"gsg.dev/project": "p", "gsg.dev/spec-digest": "sha256:aa"}
MODEL = {"id": 7, "name": "llama-8b", "meta": {**MARK, "other-tool/x": "1"}}


@pytest.mark.parametrize("answer,kwargs,why", [
    ({**MODEL, "id": 8}, {"model_id": 7}, "is model id 8, not 7"),
    ({**MODEL, "id": "7"}, {"model_id": 7}, "is model id '7', not 7"),
    ({**MODEL, "name": "llama-70b"}, {}, "is the model named 'llama-70b', not 'llama-8b'"),
    ({**MODEL, "name": "llama-8b "}, {}, "is the model named 'llama-8b ', not 'llama-8b'"),
    ({**MODEL, "meta": {**MARK, "gsg.dev/project": "q"}}, {"marker": MARK},
     "carries 'q' gsg.dev/project in its meta, not 'p'"),
    ({**MODEL, "meta": None}, {"marker": MARK}, "carries no gsg.dev/project in its meta, not 'p'"),
    ({**MODEL, "meta": {**MARK, "gsg.dev/restart-pending": "x"}}, {"marker": {"gsg.dev/restart-pending": None}},
     "carries 'x' gsg.dev/restart-pending in its meta, not none"),
    ({**MODEL, "name": "x" * 200}, {}, f"is the model named '{'x' * 76}..., not 'llama-8b'"),
    ({**MODEL, "cluster_id": 2}, {"cluster_id": 1}, "is in cluster id 2, not 1"),
    (MODEL, {"cluster_id": 1}, "is in cluster id None, not 1"),  # an answer without its cluster
    ({**MODEL, "cluster_id": "1"}, {"cluster_id": 1}, "is in cluster id '1', not 1"),
    ({**MODEL, "id": 8, "cluster_id": 2}, {"model_id": 7, "cluster_id": 1}, "is model id 8, not 7"),  # id first
])
def test_a_mismatch_says_what_the_answer_is(answer, kwargs, why):
    assert mismatch(answer, name="llama-8b", **kwargs) == why


def test_the_model_asked_for_passes_with_other_tools_meta_beside_the_marker():
    assert mismatch(MODEL, name="llama-8b", model_id=7, marker={**MARK, "gsg.dev/restart-pending": None}) is None


def test_the_cluster_is_checked_only_when_one_was_sent():
    assert mismatch({**MODEL, "cluster_id": 1}, name="llama-8b", cluster_id=1) is None
    assert mismatch({**MODEL, "cluster_id": 2}, name="llama-8b") is None  # an older server without clusters


def test_a_create_answer_with_an_id_another_model_had_is_not_new():
    known = {7: "llama-8b", 9: "qwen-32b"}
    assert taken_id(9, "llama-8b", known) == "has the id of 'qwen-32b' (id 9), a model that existed before this create"
    assert taken_id(7, "llama-8b", known) is None  # its own id (a create that found its lost answer)
    assert taken_id(10, "llama-8b", known) is None and taken_id("9", "llama-8b", known) is None


def test_one_of_name_is_exact_and_refuses_two():
    models = [{"id": 1, "name": "Llama-8b"}, {"id": 2, "name": "llama-8b"}, {"id": 3, "name": "llama-8b-2"}]
    assert one_of_name(models, "llama-8b") == {"id": 2, "name": "llama-8b"}
    assert one_of_name(models, "llama") is None
    with pytest.raises(ValueError, match=r"the server holds 2 models named 'llama-8b' \(ids 2, 4\)"):
        one_of_name(models + [{"id": 4, "name": "llama-8b"}], "llama-8b")
