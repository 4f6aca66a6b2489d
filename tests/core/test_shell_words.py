"""args.shell_words: shlex.split's words and refusals, read a run at a time (GPUStack's worker splits an item that
starts with a flag with shlex; gsg must split it the same way, and in linear time on a hostile item)."""

from __future__ import annotations

import random
import shlex

import pytest

from gpustack_guard.core.args import shell_words, worker_tokens


def _said(split, text: str) -> list[str] | str:
    try:
        return split(text)
    except ValueError as exc:
        return f"refused: {exc}"


@pytest.mark.parametrize("text, expected", [
    ("", []), ("   ", []), ("a b\tc\nd\re", ["a", "b", "c", "d", "e"]),
    ("''", [""]), ("a '' b", ["a", "", "b"]), ('a""b', ["ab"]),
    ("'a b'c", ["a bc"]), ("'a\\b'", ["a\\b"]),                       # single quotes keep a backslash
    ('"a\\"b"', ['a"b']), ('"a\\\\b"', ["a\\b"]), ('"a\\nb"', ["a\\nb"]),  # inside "": only " and \ are escaped
    ("a\\ b", ["a b"]), ("\\'", ["'"]),                                 # outside quotes: any character
    ("a\x0bb\xa0c", ["a\x0bb\xa0c"]),                                   # shlex's blanks are space, tab, CR, LF only
    ("'open", "refused: No closing quotation"), ('"open', "refused: No closing quotation"),
    ("end\\", "refused: No escaped character"), ('"end\\', "refused: No escaped character"),
])
def test_the_words_and_refusals_are_shlex_s(text, expected):
    assert _said(shell_words, text) == expected == _said(shlex.split, text)


def test_random_texts_of_shell_characters_split_as_shlex_splits_them():
    rng = random.Random(27)
    alphabet = ["a", "b", " ", "\t", "\n", "\r", "'", '"', "\\", "é", "\x0b", "$", "#", "="]
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        assert _said(shell_words, text) == _said(shlex.split, text), repr(text)


def test_an_item_of_the_longest_scalar_splits_whole():
    # 65,536 characters (yaml_positions.MAX_SCALAR_CHARS) inside quotes: shlex took ~1 s an item, a 16 MiB spec of
    # such items minutes; the run-at-a-time reading gives the same two words
    body = "x y\\\"" * 13_000
    item = f'--chat-template "{body}"'
    assert worker_tokens(item) == ["--chat-template", body.replace('\\"', '"')]
    assert _said(worker_tokens, item[:-1]) == "refused: No closing quotation"


def test_an_item_of_many_json_values_keeps_each_whole():
    # each JSON value after '=' stands aside while shlex's words are read, then goes back: 16,000 of them in one
    # item (a replace per value per token was quadratic, 8 s at 4,000) come back in place, blanks and all
    item = "--a " + " ".join(f'x{i}={{"k": [{i}, "v w"]}}' for i in range(16_000))
    tokens = worker_tokens(item)
    assert len(tokens) == 16_001 and tokens[0] == "--a"
    assert tokens[1] == 'x0={"k": [0, "v w"]}' and tokens[-1] == 'x15999={"k": [15999, "v w"]}'
