"""The per-spec shortcuts of issue 34 round 8 give what the long way gave: the model-name check's ASCII shortcut."""

from __future__ import annotations

import unicodedata
from types import SimpleNamespace

import pytest
from rule_inputs import documents, vllm

from gpustack_guard.core.spec import check as C


def _long_way(name: str) -> str | None:
    """The first character the name check refuses, by its Unicode category, one character at a time."""
    return next((c for c in name if unicodedata.category(c) in C.NAME_REFUSED_CATEGORIES), None)


def _refused(name: str) -> list[str]:
    doc = documents(vllm("a"))[0]
    return [f.message for f in C._check_name(doc, SimpleNamespace(name=name))]


@pytest.mark.parametrize("code", range(128))
def test_every_ascii_character_in_a_name_is_judged_as_by_its_category(code):
    name = f"lla{chr(code)}ma"
    bad = _long_way(name)
    found = _refused(name)
    if bad is None:
        assert found == []
    else:
        assert len(found) == 1 and f"holds U+{code:04X} " in found[0]
    assert (bad is None) == (0x20 <= code < 0x7F)  # exactly the C0 controls and DEL


@pytest.mark.parametrize("name, bad", [
    ("llamé", None), ("lla\u00a0ma", None), ("模型", None),  # non-ASCII, nothing refused: the long way says so
    ("lla\u200bma", "\u200b"), ("llamé\x07", "\x07"), ("lla\u202ema", "\u202e"), ("lla\ue000ma", "\ue000"),
])
def test_non_ascii_names_take_the_long_way(name, bad):
    assert _long_way(name) == bad
    found = _refused(name)
    assert found == [] if bad is None else (len(found) == 1 and f"holds U+{ord(bad):04X} " in found[0])
