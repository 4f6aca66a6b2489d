"""path_problem's shortcut for a short ASCII path (issue 34 tenth round) answers as the full checks do, at and
around the name limit."""

from __future__ import annotations

from gpustack_guard.adapters.files.regular_file import MAX_NAME_BYTES, path_problem


def test_short_ascii_paths_and_their_neighbours():
    assert path_problem("specs/a.yaml") is None
    assert path_problem("a" * MAX_NAME_BYTES) is None
    assert path_problem("a" * (MAX_NAME_BYTES + 1)) == "a name in the path is 256 bytes long (at most 255)"
    assert path_problem("/" + "a" * MAX_NAME_BYTES) is None  # 256 characters, no name past the limit
    assert path_problem("a\x00b") == "the path holds a NUL character"
    assert path_problem("\x00") == "the path holds a NUL character"
    assert path_problem("é" * 128) == "a name in the path is 256 bytes long (at most 255)"  # 128 characters, 256 bytes
    assert path_problem("\ud800").startswith("the path holds a character")  # a lone surrogate: the long way
