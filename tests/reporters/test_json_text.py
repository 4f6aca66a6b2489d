"""json_text.indented writes json.dumps(value, indent=2)'s bytes (issue 34: the C encoder does the values)."""

import json

import pytest

from gpustack_guard.reporters.json_text import Shared, indented

CASES = [
    {}, [], "s\u00e9\n", 3, None, 1.5, True, (1, (2,)), {"x": ()},
    {"a": {}, "b": [], "c": [[]], "d": [{}]},
    {2: 2, 1.5: [1, {}], True: None, None: "x\u00e9\n", False: {"k": [1]}},
    [1, [2, [3, {"k": [float("nan"), 1e300, -0.0, float("inf"), -float("inf"), 10 ** 30]}]]],
    # the hole that stands in for a nested container, written by a real key or string beside real children
    {"\0": [1], "b": [2]}, ['"\0', [1]], ["\0", [1], "x"], {"a": '"\0', "b": {"c": "\0"}},
    [["\0"], "\0", {"\0": "\0"}], {"\0": {"\0": ["\0", ["\0"]]}},
    {"deep": [[[[{"a": [[1], {"b": {"c": [True]}}]}]]]]},
]


@pytest.mark.parametrize("value", CASES)
def test_same_bytes_as_json_dumps_indent_2(value):
    assert indented(value) == json.dumps(value, indent=2)


@pytest.mark.parametrize("value", [{(1, 2): 1}, {"a": {(1,): 2}}, {"a": [object()]}, object(),
                                   {"a": [1, {"b": {2j: 1}}]}])
def test_same_type_error_as_json_dumps(value):
    with pytest.raises(TypeError) as expected:
        json.dumps(value, indent=2)
    with pytest.raises(TypeError) as got:
        indented(value)
    assert str(got.value) == str(expected.value)


def _plain(value):
    if isinstance(value, Shared):
        return _plain(value.value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


@pytest.mark.parametrize("inside", [{"a": [1, {"b": 2}], "c": "x\0"}, [[1], 2], {}, [], "\0", 7, None])
def test_a_shared_value_is_written_as_its_value_at_every_level(inside):
    shared = Shared(inside)
    doc = {"one": shared, "list": [shared, [shared], 1], "deep": {"k": [{"s": shared}]}, "\0": shared}
    assert indented(doc) == json.dumps(_plain(doc), indent=2)
    assert indented(shared) == json.dumps(inside, indent=2)
    # one text per level it appeared at, made once each
    assert set(shared._texts) == {0, 1, 2, 3, 4}


def test_without_the_c_encoder_a_shared_value_still_writes_its_value(monkeypatch):
    from gpustack_guard.reporters import json_text

    monkeypatch.setattr(json_text, "c_make_encoder", None)
    doc = {"a": [Shared({"x": [1, 2]}), 3]}
    assert indented(doc) == json.dumps({"a": [{"x": [1, 2]}, 3]}, indent=2)
