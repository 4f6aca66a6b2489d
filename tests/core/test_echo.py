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


# --- whole output: terminal_safe, the sinks' last line of defence ---------------------------------------------

TERMINAL_CASES = [
    ("line one\nline two\n", "line one\nline two\n"),  # gsg's own layout stays
    ("a\tb", "a\tb"),
    ("\x1b[2J\x1b[H", "\\u001b[2J\\u001b[H"),  # CSI: clear screen, cursor home
    ("\x1b]0;title\x07", "\\u001b]0;title\\u0007"),  # OSC terminal title, ended by BEL
    ("\x1b]8;;http://x\x1b\\link", "\\u001b]8;;http://x\\u001b\\link"),  # OSC 8 hyperlink, ended by ST
    ("done\rFAILED", "done\\u000dFAILED"),  # CR: overwrite the line
    ("ok\x08\x08no", "ok\\u0008\\u0008no"),  # backspace
    ("\x00\x7f", "\\u0000\\u007f"),  # NUL, DEL
    ("\x85\x9b31m\x9d", "\\u0085\\u009b31m\\u009d"),  # C1: NEL, CSI, OSC
    ("\u202eabc\u202c\u2066x\u2069", "\\u202eabc\\u202c\\u2066x\\u2069"),  # bidi override, isolate
    ("\u200b\u200d\ufeff\u2028", "\\u200b\\u200d\\ufeff\\u2028"),  # zero width, joiner, BOM, line separator
    ("\U000e0041", "\\udb40\\udc41"),  # an invisible tag character, as JSON writes it
    ("通义千问 ≥ 1 GiB…", "通义千问 ≥ 1 GiB…"),  # letters and symbols of any script stay
]


@pytest.mark.parametrize("raw,shown", TERMINAL_CASES)
def test_terminal_safe_escapes_all_but_layout(raw, shown):
    assert echo.terminal_safe(raw) == shown


@pytest.mark.parametrize("raw", [raw for raw, _ in TERMINAL_CASES])
def test_terminal_safe_json_means_the_same(raw):
    """A JSON report escaped by the sink still parses, to the very same strings."""
    import json

    document = json.dumps({"name": raw, "list": [raw]}, ensure_ascii=False)
    assert json.loads(echo.terminal_safe(document)) == {"name": raw, "list": [raw]}


def test_untrusted_is_one_capped_line():
    assert echo.untrusted("a\nb\x1b[2J") == "a\\nb\\x1b[2J"
    assert echo.untrusted("x" * 1001) == "x" * 1000 + "…(1,001 chars)"
    assert echo.untrusted("x" * 300, 256) == "x" * 256 + "…(300 chars)"


def test_escape_writes_characters_beyond_the_basic_plane_in_full():
    assert echo.escape("a\U000e0041b") == "a\\U000e0041b"
