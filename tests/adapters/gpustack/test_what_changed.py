"""The fields apply names when a model changed on the server since the plan (applier._what_changed)."""

from gpustack_guard.adapters.gpustack.applier import CHANGED_FIELDS_SHOWN, _what_changed
from gpustack_guard.core.deploy.plan import UPDATE, Change, live_digest


def _change(live: dict) -> Change:
    return Change(UPDATE, "m", None, live=live)


def test_a_field_null_on_one_side_and_absent_on_the_other_is_named():
    then, now = {"id": 1, "description": None}, {"id": 1}
    assert live_digest(then) != live_digest(now)
    assert _what_changed(_change(then), now, None) == "description"
    assert _what_changed(_change(now), then, None) == "description"


def test_values_equal_in_python_but_not_in_json_fall_back_to_its_fields():
    then, now = {"id": 1, "replicas": 1}, {"id": 1, "replicas": 1.0}
    assert live_digest(then) != live_digest(now)
    assert _what_changed(_change(then), now, None) == "its fields"


def test_server_volatile_fields_are_not_named_and_the_list_is_cut_at_its_constant():
    then = {"id": 1, "state": "running", **{f"f{i}": 0 for i in range(CHANGED_FIELDS_SHOWN + 1)}}
    now = {"id": 1, "state": "error", **{f"f{i}": 1 for i in range(CHANGED_FIELDS_SHOWN + 1)}}
    assert _what_changed(_change(then), now, None) == ", ".join(f"f{i}" for i in range(CHANGED_FIELDS_SHOWN)) + "..."


def test_a_new_created_at_says_recreated_under_the_same_id():
    then, now = {"id": 1, "created_at": "a"}, {"id": 1, "created_at": "b"}
    assert _what_changed(_change(then), now, None) == "created_at: recreated under the same id"


def test_a_saved_plan_names_a_new_id_and_otherwise_only_its_fields():
    assert _what_changed(_change({}), {"id": 2}, {"id": 1}) == ("it was model id 1 then, it is id 2 now: deleted "
                                                                "and recreated")
    assert _what_changed(_change({}), {"id": 1, "x": 2}, {"id": 1, "digest": "d"}) == "its fields"
