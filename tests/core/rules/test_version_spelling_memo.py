"""GSG039's runner spelling is kept per backend_version text (issue 34, fourteenth round): every answer must equal
the long way, and a text differing only in what the spelling normalises away gets its own answer."""

from __future__ import annotations

import pytest

from gpustack_guard.core.rules import memory as M
from gpustack_guard.core.versions import parse_version

VERSIONS = ["0.11.0", "v0.11.0", "0.11.0+cu128", " 0.11.0", "0.11.0 ", "0.11", "0.11.0.0", "0.5.4.post3",
            "0.5.4post3", "latest", "main", "", "b6000", "0.11.0rc1", "0.11.0-rc1", "V0.11.0"]


def _long_way(version: str) -> str:
    parsed = parse_version(version)
    return version if parsed is None else str(parsed).split("+", 1)[0]


@pytest.mark.parametrize("version", VERSIONS)
def test_the_kept_spelling_is_the_long_ways(version):
    M._runner_spelling.cache_clear()
    assert M._runner_spelling(version) == _long_way(version)
    assert M._runner_spelling(version) == _long_way(version)  # the kept answer, second time round


def test_neighbouring_texts_asked_after_a_kept_one_get_their_own_answer():
    M._runner_spelling.cache_clear()
    for version in VERSIONS:  # each text is its own key: '0.11.0' kept never answers for 'v0.11.0' or ' 0.11.0'
        assert M._runner_spelling(version) == _long_way(version)
    assert M._runner_spelling("v0.11.0") == "0.11.0" and M._runner_spelling("0.11.0") == "0.11.0"


def test_the_kept_spellings_are_capped():
    M._runner_spelling.cache_clear()
    for i in range(M.MAX_SPELLINGS_KEPT + 10):
        M._runner_spelling(f"0.{i}.0")
    assert M._runner_spelling.cache_info().currsize == M.MAX_SPELLINGS_KEPT
