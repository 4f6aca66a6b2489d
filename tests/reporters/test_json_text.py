"""json_text.indented writes json.dumps(value, indent=2)'s bytes (issue 34: the C encoder does the values)."""

import json

import pytest

from gpustack_guard.reporters.json_text import indented

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
