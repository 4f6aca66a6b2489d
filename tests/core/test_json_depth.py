"""gsg's own JSON nesting limit (core.json_depth): the same answer on every Python, whatever json's C depth."""

import pytest

from gpustack_guard.core.json_depth import MAX_JSON_DEPTH, nests_deeper


@pytest.mark.parametrize("text,deeper", [
    ('{"a": [1, 2, {"b": [3]}]}', False),
    ("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH, False),             # at the limit
    ("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1), True),  # one past it
    ('{"a": ' + "[" * 5000 + "]" * 5000 + "}", True),                 # parses on 3.13, fails on 3.12
    ('{"a": ' * 3000 + "1" + "}" * 3000, True),
    ('{"s": "' + "[" * 500 + '"}', False),                              # brackets inside a string
    ('{"s": "\\"' + "[" * 500 + '"}', False),                           # after an escaped quote, still inside
    ("[" * 200, True),                                                  # unbalanced: still too deep
    ("[]" * 500, False),                                                # many brackets, never deep
])
def test_nests_deeper(text, deeper):
    assert nests_deeper(text) is deeper
    assert nests_deeper(text.encode()) is deeper
