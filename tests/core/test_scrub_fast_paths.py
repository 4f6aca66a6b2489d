"""The scrub's fast paths (issue 34) mask what the slow ones mask: long keys found by str.find against the gram
grid, the token regex skipped only when no token literal is in the text, and a JSON report scrubbed whole."""

from __future__ import annotations

import json
import random
import re
import string

import pytest

import gpustack_guard.core.secrets as secrets_module
from gpustack_guard.core import echo
from gpustack_guard.core.secrets import MASK, scrub, token_spans
from gpustack_guard.reporters.json_text import indented

HF = "hf_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl"


def _both_paths(monkeypatch, text: str, secrets: list[str]) -> tuple[str, str]:
    """(scrubbed with the str.find path, scrubbed with the gram grid)."""
    secrets_module._finder.cache_clear()
    by_find = scrub(text, secrets)
    monkeypatch.setattr(secrets_module, "FIND_PROBES_MAX", -1)
    secrets_module._finder.cache_clear()
    by_grid = scrub(text, secrets)
    monkeypatch.undo()
    secrets_module._finder.cache_clear()
    return by_find, by_grid


def test_a_secret_in_a_finding_message_is_masked_in_the_json_report_by_both_paths(monkeypatch):
    secret = 'pa"ss/w\\ord-0123456789'
    report = {"findings": [{"message": f"--api-key {secret} is echoed", "data": {"value": secret[:14] + "..."}}],
              "env": {"URL": f"https://u:{secret}@host/x"}}
    text = indented(report)
    assert json.dumps(secret)[1:-1] in text  # the report holds the JSON-escaped shape, not the value as written
    by_find, by_grid = _both_paths(monkeypatch, text, [secret])
    assert by_find == by_grid
    assert json.dumps(secret)[1:-1] not in by_find and secret[:12] not in by_find
    assert by_find.count(MASK) == 3


def test_a_token_shaped_string_in_a_spec_env_is_masked_in_the_json_report():
    report = {"deployments": [{"env": {"NOTE": HF, "OTHER": f"Bearer {JWT}"}, "replicas": [["gpu-0"]]}]}
    shown = scrub(indented(report), [])
    assert HF not in shown and JWT not in shown
    assert f'"NOTE": "{MASK}"' in shown


@pytest.mark.parametrize("text", [
    HF, f"cut {HF[:14]}\\u2026 there",       # whole, and cut short by an echo with a JSON-escaped ellipsis
    "BeArEr abcdefghij0123456789XYZ",         # bearer in any case
    "x\u00e9 bEARER abcdefghij0123456789XYZ",  # the same in a text that is not ASCII
    "AKIAABCDEFGHIJKLMNOP", "xoxb-123456789012-abcdef", f"{JWT}", f"ghs_{HF[3:] * 2}",
    "lorem ipsum, no token here", "ghx_" + HF[3:],
])
def test_the_literal_pre_check_never_hides_a_token_the_pattern_finds(monkeypatch, text):
    fast = token_spans(text)
    monkeypatch.setattr(secrets_module, "_may_hold_token", lambda _text: True)
    assert fast == token_spans(text)
    assert bool(fast) == ("token" not in text and not text.startswith("ghx_"))


def test_random_texts_give_the_same_masks_by_find_and_by_grid(monkeypatch):
    rnd = random.Random(5)
    alphabet = string.ascii_letters + string.digits + "/+=%&\"<>\\:@ "
    for _ in range(40):
        secrets = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(4, 30))) for _ in range(rnd.randint(1, 4))]
        pieces = []
        for _ in range(30):
            value = rnd.choice(secrets)
            shape = rnd.choice([value, json.dumps(value)[1:-1], value[:rnd.randint(1, len(value))], "filler text"])
            pieces.append(shape + rnd.choice([" ", "", "\n", '", "']))
        text = "".join(pieces)
        by_find, by_grid = _both_paths(monkeypatch, text, secrets)
        assert by_find == by_grid


def test_terminal_safe_rewrites_what_the_full_pattern_rewrites():
    from gpustack_guard.core import echo

    sample = "".join(chr(c) for c in range(0x3100)) + "\ufeff\ufffa\U000e0041 end\n\t"
    assert echo.terminal_safe(sample) == echo._unsafe_anywhere().sub(echo._unicode_escape, sample)


def test_every_token_head_the_shapes_list_is_covered_by_a_pre_check_literal():
    # the "cut" alternative of TOKEN_SHAPES lists every shape's head; a head added there without a literal here
    # would let the pre-check hide that shape's tokens
    from gpustack_guard.core.secrets import _TOKEN_LITERALS, TOKEN_SHAPES

    heads = re.search(r"\(\?P<cut>\(\?:([^)]*)\)", TOKEN_SHAPES).group(1).split("|")

    def spelled(head: str) -> list[str]:  # gh[pousr]_ -> ghp_, gho_, ...
        one_of = re.search(r"\[([a-z]+)\]", head)
        return [head[:one_of.start()] + c + head[one_of.end():] for c in one_of.group(1)] if one_of else [head]

    expanded = [text for head in heads for text in spelled(head)]
    assert len(expanded) >= 12 and "ghr_" in expanded and "xoxs-" in expanded
    assert all(any(head.startswith(literal) for literal in _TOKEN_LITERALS) for head in expanded), expanded


def test_the_seven_scans_find_exactly_the_twelve_literals():
    from gpustack_guard.core import secrets as S

    for literal in S._TOKEN_LITERALS:
        assert S._may_hold_token(f"x {literal} y" * 3), literal
    # what the two class scans match is the listed literals, nothing wider
    spelled = {f"gh{c}_" for c in "pousr"} | {"AKIA", "ASIA"}
    assert spelled | set(S._LITERAL_SCANS) == set(S._TOKEN_LITERALS)
    for near in ("ghx_", "gh_", "ABIA", "AKI", "hf-", "sk_", "xo", "eyj"):
        assert not S._may_hold_token(f"{near} and words"), near


@pytest.mark.parametrize("tail,shown", [
    ("", ""), ("\n\t", "\n\t"), ("\x1b[2J", "\\u001b[2J"), ("\x7f", "\\u007f"), ("\x00", "\\u0000"),
    ("\r", "\\u000d"), ("\u202e", "\\u202e"), ("é", "é"),
])
def test_terminal_safe_past_the_translate_size_rewrites_as_below_it(tail, shown):
    from gpustack_guard.core import echo

    body = '{\n  "a": "b",\n\t"c": 1\n}\n' * (echo._TRANSLATE_FROM // 20)
    assert len(body) >= echo._TRANSLATE_FROM
    for text in (body + tail, tail + body):
        expected = text.replace(tail, shown) if tail else text
        assert echo.terminal_safe(text) == expected
        assert echo.terminal_safe(text) == echo._unsafe_but_layout_anywhere().sub(echo._unicode_escape, text)


def test_the_translate_table_keeps_exactly_the_ascii_the_class_search_keeps():
    # two spellings of one rule: a byte kept by one and rewritten by the other would differ above and below the size
    from gpustack_guard.core import echo

    kept_by_class = {c for c in range(128) if not echo._unsafe_but_layout_anywhere().match(chr(c))}
    assert kept_by_class == set(echo._SAFE_ASCII) and len(kept_by_class) == 97  # tab, newline, 0x20-0x7e


def test_the_ascii_classes_are_the_whole_classes_ascii_members():
    """escape/terminal_safe check ASCII text with the ASCII part of their class (compiling the whole class is ~3 M
    instructions): both must take exactly the same ASCII characters."""
    for char in map(chr, range(128)):
        assert bool(echo._UNSAFE_ASCII.match(char)) is bool(echo._unsafe_anywhere().match(char)), repr(char)
        assert bool(echo._UNSAFE_ASCII_BUT_LAYOUT.match(char)) is \
            bool(echo._unsafe_but_layout_anywhere().match(char)), repr(char)
    assert echo.escape("a\x1bb\u202ec") == "a\\x1bb\\u202ec" and echo.escape("plain") == "plain"
    assert echo.has_unsafe("x\x7f") and echo.has_unsafe("x\u200b") and not echo.has_unsafe("x y")
