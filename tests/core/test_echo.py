"""core/echo.py: values quoted in messages are short, one line, and without terminal or bidi controls."""

import pytest

from gpustack_guard.core import echo
from gpustack_guard.core.findings import Location, finding
from gpustack_guard.core.rules import documents as D

CASES = [
    ("vLLM", "vLLM"),
    ("x" * 80, "x" * 80),
    ("x" * 81, "x" * 80 + "…(81 chars)"),
    ("x" * 20_971_520, "x" * 80 + "…(20,971,520 chars)"),
    ("a\nb\tc\rd", "a\\nb\\tc\\rd"),
    ("nul\x00esc\x1b[31m", "nul\\x00esc\\x1b[31m"),
    ("abc\u202edcba", "abc\\u202edcba"),  # right-to-left override (Trojan Source)
    ("zero\u200bwidth", "zero\\u200bwidth"),
    ("no\u00a0break", "no\\u00a0break"),
    ("≥ 1 GiB…", "≥ 1 GiB…"),  # ordinary non-ASCII stays as it is
    ("é" * 79 + "\n\n", "é" * 79 + "\\n…(81 chars)"),  # cut first, then escaped: no half escape
]


@pytest.mark.parametrize("raw,shown", CASES)
def test_value_is_cut_and_escaped(raw, shown):
    assert echo.value(raw) == shown


def test_a_non_string_value_is_shown_as_text():
    assert echo.value(12345) == "12345"


def test_a_message_is_capped_at_1000_characters():
    assert echo.message("m" * 1000) == "m" * 1000
    assert echo.message("m" * 5000) == "m" * 1000 + "…(5,000 chars)"


def test_every_finding_caps_its_message_fix_and_spec_name():
    huge = "n" * 20_971_520
    f = finding(D.SCHEMA, Location("spec.yaml", 1, 1), f"name '{huge}'", spec=huge, fix=f"rename '{huge}'\x1b")
    assert len(f.message) == 1000 + len("…(20,971,527 chars)")
    assert f.spec == "n" * 256 + "…(20,971,520 chars)"
    assert f.fix == "rename '" + "n" * 992 + "…(20,971,530 chars)"


def test_a_finding_without_anything_to_cap_is_unchanged():
    f = finding(D.SCHEMA, Location("spec.yaml", 1, 1), "'replicas': ≥ 0", spec="a" * 255, fix="set it")
    assert (f.message, f.spec, f.fix) == ("'replicas': ≥ 0", "a" * 255, "set it")


def test_a_spec_name_with_a_control_character_is_escaped():
    assert echo.spec_name("bad\u202ename") == "bad\\u202ename"
    assert echo.spec_name("good-name") == "good-name"


def test_recut_keeps_the_length_a_cut_text_names():
    assert echo.recut("x" * 256 + "…(20,971,520 chars)") == "x" * 80 + "…(20,971,520 chars)"
    assert echo.recut("short…(9 chars)") == "short…(9 chars)"
    assert echo.recut("y" * 100) == "y" * 80 + "…(100 chars)"
