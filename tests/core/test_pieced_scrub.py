"""A PiecedText (core/pieced.py) is scrubbed and made terminal-safe one distinct piece at a time, and the result
is always what the joined text gives; where something could reach across two pieces the joined text is used."""

from __future__ import annotations

import base64
import json
import random
import string

import pytest
from support.scrub_passes import count_scrub_passes

import gpustack_guard.core.secrets as secrets_module
from gpustack_guard.core.echo import terminal_safe
from gpustack_guard.core.pieced import PiecedText, map_pieces
from gpustack_guard.core.secrets import MASK, scrub
from gpustack_guard.reporters.json_text import Shared, indented

HF = "hf_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl"
# of the 4,000 seeded random cases below, those scrubbed piece by piece (the path the test holds to the joined
# text's): exact for the seed, so a change that sends more of them to the joined scrub shows here
PIECEWISE_CASES = 824


def test_join_drops_empty_pieces_and_boundaries_are_the_characters_that_meet():
    text = PiecedText.join(["ab", "", "{c}", "\n"])
    assert text == "ab{c}\n" and text.pieces == ("ab", "{c}", "\n")
    assert text.boundaries() == {("b", "{"), ("}", "\n")}


def test_map_pieces_changes_each_distinct_piece_once_and_keeps_the_text_when_nothing_changes():
    shared = "{shared}"
    text = PiecedText.join(["a: ", shared, ",\n", shared, ",\n", shared])
    calls: list[str] = []

    def upper(piece: str) -> str:
        calls.append(piece)
        return piece.upper()
    changed = map_pieces(text, upper)
    assert changed == text.upper() and type(changed) is PiecedText
    assert calls == ["a: ", shared, ",\n"]  # the shared piece once, though it is there three times
    assert map_pieces(text, lambda piece: piece) is text


def test_a_json_report_is_scrubbed_once_per_shared_estimate(monkeypatch):
    secret = "s3cr3t-value-0123"
    estimate = Shared({"source": f"token {secret} echoed", "n": 1})
    report = {"deployments": [{"name": f"svc-{i}", "estimate": estimate} for i in range(50)]}
    text = indented(report, end="\n")
    assert text == json.dumps(report, indent=2, default=lambda s: s.value) + "\n"
    seen = count_scrub_passes(monkeypatch)
    shown = scrub(text, [secret])
    shared_text = estimate.text(3)
    assert sum(piece is shared_text for piece in text.pieces) == 50  # one str object, fifty places
    assert seen.count(shared_text) == 1 and len(seen) == 52  # and the 51 texts around them (the last with the end)
    assert shown == scrub(str(text), [secret])  # the joined text's scrub, byte for byte
    assert shown.count(MASK) == 50 and secret not in shown


@pytest.mark.parametrize("secret", [
    ': {\n      "source',   # a secret holding the report's own layout where a shared estimate starts
    "wordy }\n  ",           # one holding the '}' and newline where a shared estimate ends
])
def test_a_secret_that_could_reach_across_two_pieces_gets_the_joined_texts_scrub(monkeypatch, secret):
    estimate = Shared({"source": "text", "n": 1})
    report = {"deployments": [{"name": f"svc-{i}", "estimate": estimate} for i in range(3)]}
    text = indented(report)
    secrets = [secret]
    seen = count_scrub_passes(monkeypatch)
    shown = scrub(text, secrets)
    assert seen == [str(text)]  # one pass over the joined text
    seen.clear()
    assert shown == scrub(str(text), secrets)


@pytest.mark.parametrize("pieces, piecewise", [
    (["key: ", "{" + HF + "}"], True),                  # a token inside a piece
    (["Bearer", " abcdefghij0123456789XYZ"], False),    # bearer's gap is where the pieces meet
    (["x " + HF[:20], HF[20:] + " y"], False),          # a token cut in two by the meeting point
    (["cut " + HF[:14], "... there"], False),           # a cut token's look-ahead is the next piece's start
    (["Zm9vOmJhcj", "E= tail"], False),                 # a base64 run going on into the next piece
    (["{", JWT, "}"], False),                          # a token starting where two pieces meet: joined
    (["a ", "{" + JWT + "}", ",\n"], True),
    (["a}", ",\n", "}"], True),
])
def test_token_shapes_are_the_same_piecewise_or_joined(monkeypatch, pieces, piecewise):
    text = PiecedText.join(pieces)
    seen = count_scrub_passes(monkeypatch)
    shown = scrub(text, [])
    assert (seen != ["".join(pieces)]) is piecewise
    assert shown == scrub("".join(pieces), [])


def _random_pieces(rng: random.Random) -> tuple[list[str], list[str]]:
    """Pieces drawn from a small alphabet near every edge case, some of them repeated, and secrets cut from
    their joined text, JSON-escaped or base64-encoded, some across a meeting point."""
    alphabet = "ab{}[],: \n\"=+/-_.\\\u2026\u00e9\x1b" + "hf_sk-eyJ"
    edges = '{}[],:"\n '  # mostly pieces that meet as a report's do, on layout characters; now and then not
    made = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(rng.randint(1, 6))]
    made = [rng.choice(edges) + piece + rng.choice(edges) if rng.random() < 0.8 else piece for piece in made]
    pieces = [rng.choice(made) for _ in range(rng.randint(1, 10))]
    joined = "".join(pieces)
    secrets = []
    for _ in range(rng.randint(0, 3)):
        start = rng.randrange(len(joined))
        value = joined[start:start + rng.randint(4, 14)]
        kind = rng.random()
        if kind < 0.2:
            value = base64.b64encode(value.encode()).decode()
        elif kind < 0.3:
            value = json.dumps(value)[1:-1]
        secrets.append(value)
    if rng.random() < 0.3:
        pieces.insert(rng.randrange(len(pieces) + 1), rng.choice(["hf_" + string.ascii_letters[:31] + "9", JWT,
                                                                   "Bearer abcdefghijklmnop1", "AKIAABCDEFGHIJKLMNOP"]))
    return pieces, secrets


def test_random_pieces_and_secrets_scrub_as_their_joined_text():
    rng = random.Random(34)
    piecewise = 0
    for _ in range(4000):
        pieces, secrets = _random_pieces(rng)
        text = PiecedText.join(pieces)
        wanted = frozenset(v for v in secrets if len(v) >= secrets_module.SHORTEST_SECRET)
        piecewise += len(text.pieces) > 1 and secrets_module._piecewise_exact(
            text.boundaries(), secrets_module._finder(wanted) if wanted else None)
        for shapes in (True, False):
            assert scrub(text, secrets, shapes=shapes) == scrub("".join(pieces), secrets, shapes=shapes), \
                (pieces, secrets)
        assert terminal_safe(text) == terminal_safe("".join(pieces))
    assert piecewise == PIECEWISE_CASES


def test_terminal_safe_escapes_each_piece_as_the_joined_text():
    shared = "\x1b[31mred\x1b[0m\t"
    text = PiecedText.join(["a\x00", shared, "\n", shared, "\u202e"])
    safe = terminal_safe(text)
    assert safe == terminal_safe(str(text)) == "a\\u0000\\u001b[31mred\\u001b[0m\t\n\\u001b[31mred\\u001b[0m\t\\u202e"
