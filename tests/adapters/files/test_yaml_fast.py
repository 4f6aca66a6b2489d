"""yaml_fast against the composed path it shortcuts: on every YAML file of the repository and on the neighbours
of a spec's common shape (one line changed at a time), the fast path either declines or gives the same data
(types too), start line, duplicate keys, YAML 1.1-only numbers, positions and plain texts."""

from __future__ import annotations

import datetime
import random
import time
from pathlib import Path

import pytest
import yaml

from gpustack_guard.adapters.files import yaml_fast, yaml_positions
from gpustack_guard.adapters.files.yaml_documents import load_documents
from gpustack_guard.adapters.files.yaml_fast import fast_documents
from gpustack_guard.adapters.files.yaml_positions import (
    MAX_ITEMS,
    MAX_SCALAR_CHARS,
    MAX_SPEC_ITEMS,
    YamlSyntaxError,
    load_composed,
    node_bound,
)

REPO = Path(__file__).resolve().parents[3]
_SKIPPED = {".venv", ".git", "node_modules"}


def _repository_yaml() -> list[Path]:
    found = []
    for pattern in ("*.yaml", "*.yml", "*.yaml.j2", "*.yml.j2"):
        found += [p for p in REPO.rglob(pattern) if not _SKIPPED & set(p.relative_to(REPO).parts)]
    return sorted(set(found))


def _typed(value):
    """The value with the type of every part spelled out (True, 1 and "1" differ; so do 1 and 1.0)."""
    if isinstance(value, dict):
        return ("dict", [(_typed(k), _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    if isinstance(value, float) and value != value:
        return ("float", "nan")
    return (type(value).__name__, value)


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, path + (key,))
        yield path + ("no such key",)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, path + (index,))
        yield path + (len(value),)


def assert_same(text: str, max_items: int = MAX_SPEC_ITEMS) -> bool:
    """True when the fast path took the text (and agreed with the composed path in everything)."""
    fast = fast_documents(text, max_items)
    try:
        full = load_composed(text, max_items=max_items)
    except YamlSyntaxError as exc:
        assert fast is None, f"fast path read text the full path refuses ({exc}):\n{text}"
        return False
    if fast is None:
        return False
    assert len(fast) == len(full), text
    for ours, theirs in zip(fast, full):
        assert _typed(ours.data) == _typed(theirs.data), text
        assert ours.start_line == theirs.start_line, text
        assert ours.duplicate_keys == theirs.duplicate_keys, text
        assert [(p, t, _typed(v)) for p, t, v in ours.yaml11_numbers] == \
            [(p, t, _typed(v)) for p, t, v in theirs.yaml11_numbers], text
        assert [(p, _typed(k), t) for p, k, t in ours.non_text_keys] == \
            [(p, _typed(k), t) for p, k, t in theirs.non_text_keys], text
        for path in _paths(theirs.data):
            for key in (False, True):
                assert ours.position(path, key=key) == theirs.position(path, key=key), (path, key, text)
                assert ours.plain_text(path, key=key) == theirs.plain_text(path, key=key), (path, key, text)
    return True


@pytest.mark.parametrize("path", _repository_yaml(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_repository_yaml_file(path: Path) -> None:
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        pytest.skip("not UTF-8 (the loader's decode refuses it first)")
    assert_same(text)
    assert_same(text, MAX_ITEMS)


BASE = """\
# a spec
name: svc-0001
source: huggingface
huggingface_repo_id: Qwen/Qwen2.5-1.5B-Instruct
replicas: 1
categories: [llm]
gpu_selector:
  gpu_ids: [node-000:cuda:0, node-000:cuda:1]
backend: vLLM
backend_version: 0.11.0
backend_parameters:
  - --gpu-memory-utilization=0.4
  - --max-model-len=8192
env:
  A: b
guard:
  template: vllm-hardened
  vars:
    gpu_memory_utilization: 0.4
    max_num_seqs: 16
worker_selector: {rack: r1}
"""

# Values a line may hold after `key: ` or `- ` (each a YAML subtlety or its plain neighbour)
VALUES = [
    "", "x", "x y", "x  y", "1", "-1", "+1", "0", "00", "010", "08", "0o17", "0x1F", "0b101", "1_000", "1:30",
    "190:20:30", "1.5", "1e3", "1.0e+3", ".5", "-.inf", ".Inf", ".nan", ".NaN", "1.", "yes", "No", "on", "OFF",
    "y", "n", "Y", "true", "False", "TRUE", "tRUE", "null", "Null", "~", "NULL", "2001-12-14", "2001-12-14t21:59:43.10-05:00",
    "2001-13-45", "<<", "=", "&a x", "*a", "!!str 1", "!x y", "|", ">", "|-", "'a'", "'a''b'", "'a # b'",
    "'a: b'", '"a"', '"a\\tb"', '"a # b"', '"a: b"', '"it\'s"', "'say \"hi\"'", "a#b", "a #b", "a # b",
    "x # comment", "'x' # c", "'x'# c", '"x"x', "[a, b]", "[a,b]", "[ a , b ]", "[]", "[ ]", "{}", "[a, b,]",
    "[a, [b]]", "[a: b]", "[a, 'b']", "[node-000:cuda:0]", "[a:, b]", "[-1, 1:30, yes, ~]", "{rack: r1}",
    "{rack: r1, zone: z}", "{a: 1, a: 2}", "{a:1}", "{a: [b]}", "{a: }", "[a] b", "[a] # c", "[a", "{a: b",
    "{a: {b: c}}", "{a: [b, c], d: e}", "[[a, b], [c]]", "[{a: 1}, {a: 2}]", "{a: {b: {c: 010}}}", "[a, [b]",
    "{a: {b: c}", "{a: {b: c}} # c", "{a: {b: c}}x", "[[[[[[[[[a]]]]]]]]]", "{a: [b,]}", "{a: b, a: [c]}",
    "{a: [1:30, 0x1F]}", "[a:?b]", "{a: b:?c}", "[a?:b]", "[ [ a ] , { b: c } ]", "{a: , b: c}", "{a:{b: c}}", "{a: {b: c} d}",
    "a: b", "a:", "a:b", "http://x:80/y", "- a", "-", "-a", "--flag=1", "? a", "?a", ":a", "%x", "@x", "`x",
    ",x", "a,b", "a[0]", "a{b}", "\u00e9t\u00e9", "\u00a0x", "x\u00a0", "\u2028", "\ufeffx", "\x85", "\x01",
    "a\tb", "'a", '"a', "x   ", "~x", "0.4", "1e", "0x", "1__0", "-0", "+.5", "0.", "12:", "a'b", 'a"b',
]

# Whole-line replacements (structure rather than values)
LINES = [
    "---", "...", "--- # doc", "%YAML 1.1", "key with spaces: v", "dotted.key: v", "'quoted key': v",
    '"quoted key": v', "'a''b': v", "1: one", "yes: on", "~: n", "null: x", ": v", "? k", "<<: {a: 1}",
    "&a anchored: 1", "k: &a v", "k: *a", "name: dup", "name:  spaced", "name:", "name: # only a comment",
    "   # indented comment", "#", "  ", "x", "- item", "  - item", "\tname: tab", "name:\tv", "name : v",
    "name:v", "name: v:", "name: 'v'  # c", "name: v   ", "k: |", "k: >-", "k: 'multi", "   continued",
    "        deeper: 1", " odd: 1", "k: v # c: d", "'k': v", "'k':v", "[a]: b", "{a: b}: c",
]


FLEET = "format_version: 1\nclusters:\n  - name: big\n    workers:\n" + "".join(
    f"      - name: node-{w:04d}\n        labels: {{rack: r{w % 10}}}\n        gpus:\n" + "".join(
        f"          - {{index: {g}, name: NVIDIA L40S, memory: {{total: 46068MiB}}}}\n" for g in range(4))
    for w in range(500))  # a fleet snapshot's shape, one the full path counts


def _neighbours() -> list[str]:
    lines = BASE.split("\n")
    texts = []
    for index, line in enumerate(lines):
        if not line or line.startswith("#"):
            continue
        indent = line[:len(line) - len(line.lstrip(" "))]
        head = line.lstrip(" ")
        prefix = "- " if head.startswith("- ") else (head.partition(": ")[0] + ": " if ": " in head else None)
        if prefix is not None:
            for value in VALUES:
                texts.append("\n".join(lines[:index] + [indent + prefix + value] + lines[index + 1:]))
        for replacement in LINES:
            texts.append("\n".join(lines[:index] + [indent + replacement] + lines[index + 1:]))
            texts.append("\n".join(lines[:index + 1] + [indent + replacement] + lines[index + 1:]))
    texts += [BASE.replace("\n", "\r\n"), BASE.replace("\n", "  \n"), "\ufeff" + BASE, BASE.rstrip("\n"),
              BASE + "\n\n", "\n\n" + BASE, "---\n" + BASE, BASE + "...\n", BASE + "---\nname: b\n", "",
              BASE + "---\n", BASE + "---\n# only a comment\n---\n" + BASE, "---\n---\n", "a: 1\n---\n  b: 2\n",
              "a:\n---\n  b: 1\n", "a: 1\n--- \nb: 2\n", "a: 1\n---\n- x\n---\nx\n", "a: 1\n---\nb: 2\nb: 3\n",
              BASE + "---\n" + BASE.replace("replicas: 1", "replicas: 010"),
              "# only a comment\n", "x\n", "- a\n- b\n", "- a: 1\n  b: 2\n- c: 3\n", "  a: 1\n  b: 2\n",
              "  a: 1\nb: 2\n", "a:\n- x\n- y\nb: 1\n", "a:\n  - x\n  - y\nb: 1\n", "a:\n    - x\n    - y\n",
              "a:\n- x\n  - y\n", "a:\n  - x\n - y\n", "a:\n  - k: 1\n    j: 2\n  - k: 3\n",
              "a:\n  - k: 1\n   j: 2\n", "a:\n  -   k: 1\n      j: 2\n", "a:\n  - k:\n      - z\n",
              "a:\n  - k:\n    - z\n", "a:\n  -\n    k: 1\n", "a:\n  - - x\n", "a: 1\na: 2\n",
              "a:\n  b: 1\n  b: 2\n", "a:\n  - b: 1\n    b: 2\n", "1: a\ntrue: b\n", "a:\n\n  b: 1\n",
              "a:\n# c\n  b: 1\n", "a: b\n  c\n", "a: 'b\n  c'\n", "a:\n  b\n", "a: [b,\n  c]\n",
              "a: " + "x" * 20_000 + "\n", "a: " + "9" * 1_200 + "\n", "k" * 1_100 + ": v\n",
              "k\U0001F600: [a, b]\n", "\u00e9: {x: [1, 2]}\n", "- \u00e9: 1\n  \u00fc: [a, \U0001F600b]\n",
              "a: \U0001F600 # c\nb: [\u00e9, \u00fc]\n", '"\u00e9": [x]\n', "a:\n  - [\u00e9, {\u00fc: 1}]\n",
              "a:\n" + "".join(f"  - {i}\n" for i in range(5_000)), FLEET, FLEET + "---\n",
              FLEET.replace("total: 46068MiB}", "total: 46068MiB}", 1).replace("rack: r7", "rack: *r7"),
              FLEET.replace("node-0007", "node-0007\n        name: dup"),
              "".join(" " * (2 * d) + f"k{d}:\n" for d in range(70)) + " " * 140 + "v: 1\n"]
    return texts


def test_neighbours_of_the_common_shape() -> None:
    texts = _neighbours()
    taken = sum(assert_same(text) for text in texts)
    assert taken > len(texts) // 3  # the comparison ran: the fast path took a good share of them


_ALPHABET = " \n-:#,[]{}'\"!&*|>?%@`\\\t\r.~01xyYN_\u00e9"  # YAML's signs, and a few letters and digits


def test_random_edits_of_the_common_shape() -> None:
    """Characters inserted, deleted or replaced at random (seeded), one to three per text."""
    rng = random.Random(23)
    taken = 0
    for _ in range(3_000):
        text = BASE
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(text))
            edit = rng.choice("idr")
            piece = "" if edit == "d" else rng.choice(_ALPHABET)
            text = text[:at] + piece + text[at + (edit != "i"):]
        taken += assert_same(text)
    assert taken > 500


def _edit_lines(rng: random.Random, lines: list[str]) -> None:
    """One line indented, outdented, swapped, repeated, dropped, or given another value from VALUES."""
    index = rng.randrange(len(lines))
    line = lines[index]
    edit = rng.choice("iosrdv")
    if edit == "i":
        lines[index] = " " * rng.randint(1, 3) + line
    elif edit == "o":
        lines[index] = line[rng.randint(1, 3):] if line.startswith(" ") else line
    elif edit == "s":
        other = rng.randrange(len(lines))
        lines[index], lines[other] = lines[other], line
    elif edit == "r":
        lines.insert(index, lines[rng.randrange(len(lines))])
    elif edit == "d" and len(lines) > 1:
        lines.pop(index)
    elif edit == "v" and (": " in line or "- " in line):
        head = line.split(": ")[0] + ": " if ": " in line else line[:line.index("- ") + 2]
        lines[index] = head + rng.choice(VALUES)


def test_random_line_edits_of_specs_and_fleets() -> None:
    rng = random.Random(34)
    shipped = REPO / "specs" / "llama-8b.yaml"  # absent where the suite runs from an installed wheel
    bases = [BASE, FLEET[:3_000], "a:\n- x: [1, {b: c}]\n  y: 2\n- z\n---\nb: {c: [d, e]}\n"]
    bases += [shipped.read_text()] if shipped.exists() else []
    taken = 0
    for _ in range(2_000):
        lines = rng.choice(bases).split("\n")
        for _ in range(rng.randint(1, 3)):
            _edit_lines(rng, lines)
        taken += assert_same("\n".join(lines))
    assert taken > 300


def test_a_fleet_is_taken() -> None:
    assert node_bound(FLEET) > yaml_positions.COUNT_ABOVE
    assert assert_same(FLEET, MAX_ITEMS)


def test_the_limits_are_read_when_called(monkeypatch) -> None:
    """A limit lowered (as tests do) sends a text past it the full way, which reports it."""
    monkeypatch.setattr(yaml_positions, "MAX_NODES", 1_000)
    assert fast_documents(FLEET, MAX_ITEMS) is None
    monkeypatch.setattr(yaml_positions, "MAX_DOCUMENTS", 2)
    assert fast_documents("a: 1\n---\nb: 2\n---\nc: 3\n", MAX_ITEMS) is None
    assert fast_documents(BASE, MAX_ITEMS) is not None


def test_load_documents_keeps_its_errors_and_limits() -> None:
    with pytest.raises(YamlSyntaxError):
        load_documents("a: [b\n", max_items=MAX_SPEC_ITEMS)
    with pytest.raises(YamlSyntaxError, match="limit 4,096"):
        load_documents("a: [" + ", ".join("x" * 4_200) + "]\n", max_items=MAX_SPEC_ITEMS)


def test_the_common_shape_is_taken() -> None:
    assert fast_documents(BASE, MAX_SPEC_ITEMS) is not None
    documents = load_documents(BASE, max_items=MAX_SPEC_ITEMS)
    assert documents[0].root is None  # no nodes composed
    assert documents[0].position(("guard", "vars", "max_num_seqs")) == (20, 19)
    assert documents[0].position(("worker_selector", "rack"), key=True) == (21, 19)
    assert documents[0].plain_text(("replicas",)) == "1"


def test_refused_characters_ascii_check_equals_the_whole_class() -> None:
    """An ASCII text is checked against the class's ASCII part alone (the whole class compiles on first non-ASCII
    text): every character, alone and inside ASCII or non-ASCII text, is refused exactly as the whole class says."""
    import re

    whole = re.compile(yaml_fast._REFUSED_PATTERN)
    characters = [chr(c) for c in range(0x3000)] + ["\ufeff", "\ufffe", "\uffff", "\U0001f600", "\U0010ffff"]
    for c in characters:
        for text in (c, f"name: a{c}\n", f"name: \u00e9{c}\n"):
            assert yaml_fast._has_refused_character(text) is (whole.search(text) is not None), repr(text)
    assert yaml_fast._has_refused_character("a\rb") and yaml_fast._has_refused_character("a\tb")
    assert not yaml_fast._has_refused_character("name: caf\u00e9\n")


# Review round 23: what a hostile pull request or an odd editor writes, each case tried against the full path (the
# fast path declines or agrees). Found and fixed: a quoted key or a flow mapping's key past YAML's 1,024 characters
# (the full path's error) was read; a limit lowered below the module's own caps (MAX_DEPTH, MAX_SCALAR_CHARS).
_LINE = yaml_fast._MAX_LINE_CHARS
_KEY = yaml_fast._MAX_KEY_CHARS
HOSTILE = [
 "a: \u00e9\u00e9 x\nb: [\u00e9, c]\n", "\u00e9\u00e9: [x, y]\n", "\U0001F600: {a: b}\n", "k: \U0001F600\U0001F600 [x]\n",
 "a:\n  \U0001F600: [1, 2]\n", "- \U0001F600: 1\n  b: [x]\n", "k: [\U0001F600, \U0001F600x, y]\n", "k: {\U0001F600: \U0001F600}\n",
 "1: a\n", "true: a\n", "null: a\n", "~: a\n", "1.0: a\n", "0x10: a\n", "2001-01-01: a\n", "1: a\n'1': b\n", "1: a\n1: b\n",
 "true: a\nTrue: b\n", "1.0: a\n1: b\n", "1: a\n1.0: b\n", "0x10: a\n16: b\n", "~: a\nnull: b\n", "010: a\n8: b\n",
 "1:30: a\n", "a:\n  1: x\n  2: [y]\n", ".nan: a\n", ".nan: a\n.nan: b\n", "yes: a\nno: b\n", "2001-01-01: a\n2001-01-01: b\n",
 "<<: a\n", "=: a\n", "a: <<\n", "a: =\n", "a: [<<]\n", "a: {<<: b}\n", "a: {=: b}\n",
 "a: 1\n\"a\": 2\n", "a: 1\n'a': 2\n", "'a': 1\na: 2\n", "key:value\n", "key :v\n", "key : v\n", "- -\n", "-  x\n", "- - a\n", "-\tx\n",
 "a: b#c\n", "a: b #c\n", "a: b# c\n", "a: 'b' # c\n", "a: 'b'# c\n", "a: \"b\" c\n", "a: b  \n", "a: b", "", "# c\n# d\n", "---\n", "--- # c\na: 1\n",
 "---\n# c\n", "key: |\n  x\n", "key: |-\n  x\n", "a: -\n", "a: :\n", "a: ?\n", "- -\n", "- :\n", "- ?\n",
 "key: [ a , b ]\n", "key: [a,b]\n", "key: {a: 1, a: 2}\n", "key: {a}\n", "key: [a, ]\n", "key: [, a]\n", "key: [a, [b, c]]\n",
 "a:\n b: 1\n c: 2\n", "a:\n   b: 1\n   c: [x]\n", "a:\n  b: 1\n   c: 2\n", "a:\n   b: 1\n  c: 2\n", "- a: 1\n  b: 2\n",
 "-   a: 1\n    b: 2\n", "- a: 1\n   b: 2\n", "- a: 1\n b: 2\n", "-  a:\n     - x\n", "x:\n- a: 1\n  b:\n  - c\n",
 "a:\nb: 1\n", "a:\n  b:\nc: 1\n", "a: 1\r\nb: 2\r\n", "a: 1\n   \nb: 2\n", "a: 1\n \n", "a: x\u0085y\n", "a: x\u2028y\n", "a: x\u2029y\n",
 "a: x\u200by\n", "a: \u200b\n", "\u200b: a\n", "a: \u202ex\u202c\n", "a: \u200fx\n", "\u200f: x\n", "a: \ufeff\n",
 "a: [1:30, 010, 0o7, 0x1F, 1_0]\n", "a: {b: 010, c: [1:30]}\n", "- [010, 07]\n", "a: [-010, +07, 0_7]\n", "a: [1:30:00, 190:20:30.15]\n",
 "a: \"b\"c\n", "a: 'b'c\n", "a: \"\"\n", "a: ''\n", "'': a\n", "\"\": a\n", "a: ' '\n", "a: 'x'\n'b': \"y\"\n",
 "a: b\n...\n", "a: b\n---\n", "---\n---\na: 1\n", "a: 1\n---\n\n# c\n---\nb: 2\n", "\n\n---\na: 1\n", "--- \na: 1\n", "---\n  a: 1\n",
 "a: x:y\n", "a: x: y\n", "a: http://x\n", "a: x:\n", "a: [x:y]\n", "a: [x: y]\n", "a: {x:y}\n", "a: {x: y:z}\n", "a: [http://x]\n",
 "a: [a b, c  d]\n", "a: [a  ]\n", "a: [  a]\n", "a: {  a: b  }\n", "a: {a:  b}\n", "a: {a :b}\n", "a: {a : b}\n",
 "a: {'b': c}\n", "a: {\"b\": c}\n", "a: [-]\n", "a: [- x]\n", "a: [-x]\n", "a: {-: x}\n", "a: {? b: c}\n", "a: [?x]\n", "a: [:x]\n",
 "a: [x]#c\n", "a: [x] #c\n", "a: [x]  # c\n", "a: {b: c}#c\n", "a: [x,]\n", "a: [x , ]\n", "a: [x,,y]\n", "a: {}\n", "a: []\n", "a: [ ]\n", "a: { }\n",
 "a: [{}]\n", "a: [[]]\n", "a: {b: {}}\n", "a: {b: []}\n", "a: {b: , c: d}\n", "a: {b:}\n", "a: {b: c,}\n",
 "a: [true, ~, null, 1.5, .inf, 2001-01-01]\n", "a: {1: x, true: y, ~: z}\n", "a: {1: x, 1.0: y}\n", "a: {0x10: x, 16: y}\n",
 "a: {2001-01-01: x}\n", "a: {b: 2001-01-01 10:00:00}\n", "a: 2001-01-01 10:00:00\n", "a: 2001-01-01t10:00:00z\n",
 "a:  b\n", "a:   [x]\n", "-   [x]\n", "-   'x'\n", "- 'x'\n- \"y\"\n", "a:\n- x\nb:\n- y\n",
 "a:\n  -  x\n  - y\n", "a:\n  - x\n  -  y\n", "a:\n  -  k: 1\n     j: 2\n", "a:\n  -  k: 1\n    j: 2\n",
 "a:\n  - k: [1]\n    j: {x: y}\n", "- a\n-  - b\n", "- a:\n  - b\n", "- a:\n    - b\n", "- a:\n   - b\n", "- a:\n  b: 1\n",
 "a: b\n\tc: d\n", "a: b\t\n", "a:\tb\n", "a: b # \tc\n", "# \t\na: 1\n", "a: 1 # \u0085\n", "# \u2028\na: 1\n",
 "a: 1\nb: 2", "a: [x]", "- x", "a:", "a: 'x'", "a: # c", "a:  # c\n  - x\n", "a: # c\n  b: 1\n",
 "a: " + "x" * MAX_SCALAR_CHARS + "\n", "a: " + "x" * (MAX_SCALAR_CHARS + 1) + "\n",
 "a: '" + "x" * (MAX_SCALAR_CHARS + 1) + "'\n", "a: [" + "x" * (MAX_SCALAR_CHARS + 1) + "]\n",
 "k: " + "x" * (_LINE - 3) + "\n", "k: " + "x" * (_LINE - 2) + "\n", "x" * _KEY + ": v\n", "x" * (_KEY + 1) + ": v\n",
 "x" * 1023 + ": v\n", "x" * 1024 + ": v\n", "x" * 1025 + ": v\n", "'" + "x" * 1030 + "': v\n", "\"" + "x" * 1030 + "\": v\n",
 "a: {" + "x" * 1030 + ": v}\n", "a: {b: " + "x" * 1030 + "}\n", "- " + "x" * 1030 + ": v\n", "  " + "x" * 999 + ": v\n",
 "\u00e9" * 1000 + ": v\n", "\U0001F600" * 600 + ": v\n", "\U0001F600" * 1000 + ": v\n", "a: 9" + "0" * 999 + "\n", "a: 9" + "0" * 1000 + "\n",
 "a: [9" + "0" * 1000 + "]\n", "9" + "0" * 1000 + ": a\n", "a: 1" + "_0" * 600 + "\n", "a: 1:" + "0" * 999 + "\n",
 "a: !!str x\n", "a: &x b\nc: *x\n", "? a\n: b\n", "a: [b]: c\n", "[a]: b\n", "{a: b}: c\n", "a: b: c\n",
 "a: 'b\n  c'\n", "a: \"b\\\"\"\n", "a: b\n  # c\nd: e\n", "a:\n  # c\n  b: 1\n", "a:\n# c\nb: 1\n",
 "a: x\n  # c\n", "a: [x]\n  - y\n", "- x\n  - y\n", "- x\n- y\n  z: 1\n",
 "a:\n  b: 1\n  c:\n    d: 2\n  e: 3\nf: 4\n", " a: 1\n b: 2\n", " - x\n - y\n", "  - x\n - y\n",
 "a: 010\nb: [010]\nc: {d: 010}\n- x\n", "%YAML 1.1\n---\na: 1\n", "a: 1\n%x\n", "a: 1\n--- x\n",
 "a: x\x0b\n", "a: x\x7f\n", "a: x\x80\n", "a: x\x9f\n", "a: x\xa0\n", "a: \ue000\n", "a: \ufffd\n", "a: \ufffe\n",
 "a: @x\n", "a: `x\n", "a: %x\n", "a: !x\n", "a: &x\n", "a: *x\n", "a: |x\n", "a: >x\n", "a: x|\n", "a: x!\n", "a: x&\n", "a: x*\n",
 "a: x%\n", "a: x@\n", "a: x?\n", "a: x?y\n", "a: ?x\n", "a: :x\n", "a: -x\n", "a: --\n", "a: ---\n", "a: ...\n",
 "- ---\n", "- ...\n", "a: [---]\n", "a: [...]\n", "a: [-- -]\n", "a: x ,y\n", "a: x]y\n", "a: x}\n", "a: x[0]\n", "a: x{}\n",
 "a: [x{}]\n", "a: [x[0]]\n", "a: {x: y}}\n", "a: [x]]\n",
    # `?` inside a flow scalar: libyaml reads it as text, PyYAML's pure-Python scanner as a key indicator
    "a: [a?b]\n", "a: [a?]\n", "a: {a: b?c}\n", "a: {a?: b}\n", "a: [x, y?z]\n", "a: [http://x/?q=1]\n", "a: b?c\n",
    # keys that start with an indicator (`?x`, `:x`, `-x` are plain outside a flow), quoted keys among plain ones
    "?a: b\n", ":a: b\n", "-a: b\n", "a?: b\n", "- ?a: b\n", "- :a: b\n", "a: [-a, ?]\n", "?a:\n  - x\n",
    "a: ?b:c\n", "a:b:c: d\n", "a: 'b'\n'a': c\n", "- a\n- 'b': c\n", "'- a': b\n", "'#': b\n", "'a': 'b': c\n",
    "x:\n  y: 1\n  z: [a, {b: 010}]\n- w\n", "a: 1\n  \n  \nb: 2\n", "a: [x]\n\n", "a: &\n",
    # second batch

 ".nan: a\n.nan: a\n", "a: {.nan: 1, .nan: 2}\n", "a: b :c\n", "a: b \u00a0# c\n", "a:\u00a0b\n", "a\u00a0: b\n", "a: b\u3000\n",
 "a: 1\n---", "a:   \nb: 1\n", "a:  # c\nb: 1\n", "- a:   \n  b: 1\n", "- a:\n  - x\n  b: 1\n", "a:\n- x\n- y\n b: 1\n",
 "a: [" + "x" * 2000 + "]\n", "a: {b: " + "x" * 2000 + "}\n", "- " + "x" * 2000 + "\n", "a: '" + "x" * 2000 + "'\n",
 "\u00e9" * 1001 + ": v\n", "\U0001F600" * 1001 + ": v\n", "a[b: c\n", "a{b: c\n", "- 'a': b\n", "- [a]: b\n",
 "a: {b: c, d: [e, {f: 010}]}\nb: [1:30]\n", "- a: 010\n  b: [0o7, 07]\n- 1:30\n",
 "a:\n  - b: 1\n    b: 1\n  - b: 1\n", "a: 1\nb: 2\na: 3\n", "a:\n  x: 1\na:\n  x: 2\n",
 "k: v\n" * 3, "- a\n" * 3, "a: [x]\nb: [x]\n", "a: {x: y}\nb: {x: y}\n",
 "1: a\n2: b\n3: c\n", "True: a\n1: b\n", "1: a\nTrue: b\n", "0: a\nfalse: b\n", "0.0: a\n0: b\n", "-0: a\n0: b\n",
 "a: {1: x, True: y}\n", "a: {0: x, false: y}\n", "a: {~: x, null: y}\n",
]


@pytest.mark.parametrize("text", HOSTILE, ids=lambda t: repr(t[:40]) + (f"...{len(t)}" if len(t) > 40 else ""))
def test_hostile_and_odd_texts(text: str) -> None:
    assert_same(text)


@pytest.mark.parametrize("key", ["\'" + "x" * 1_030 + "\'", '"' + "x" * 1_030 + '"', "{" + "x" * 1_030 + ": v}"])
def test_a_key_past_yamls_1024_characters_is_refused_as_before(key: str) -> None:
    text = (f"a: {key}\n" if key.startswith("{") else f"{key}: v\n")
    assert fast_documents(text, MAX_SPEC_ITEMS) is None
    with pytest.raises(YamlSyntaxError):
        load_documents(text, max_items=MAX_SPEC_ITEMS)


@pytest.mark.parametrize("quote", ["\'", '"'])
def test_quoted_keys_around_the_key_cap(quote: str) -> None:
    for length in (_KEY - 2, _KEY - 1, _KEY + 1, 1_022, 1_023):  # the key's length with its quotes
        assert_same(quote + "x" * length + quote + ": v\n")
        assert_same("a: {" + "x" * length + ": v}\n")


def test_depth_around_the_fast_paths_caps() -> None:
    for depth in range(yaml_fast._MAX_FAST_DEPTH - 2, yaml_fast._MAX_FAST_DEPTH + 3):
        for flow in (0, 1, yaml_fast._MAX_FLOW_DEPTH - 1, yaml_fast._MAX_FLOW_DEPTH, yaml_fast._MAX_FLOW_DEPTH + 1):
            value = "[" * flow + "x" + "]" * flow if flow else "x"
            keys = "".join(" " * d + f"k{d}:\n" for d in range(depth))
            assert_same(keys + " " * depth + f"v: {value}\n")
            items = "".join(" " * (2 * d) + f"- k{d}:\n" for d in range(depth // 2))
            assert_same(items + " " * depth + f"v: {value}\n")


# The same line in another context: read in a block mapping first (remembered), then in a file where it is inside a
# block scalar, a flow, a quoted scalar or a continued plain scalar; and the other way round.
_CONTEXTS = [
    ("a:\n  b: [x, y]\n", "a: |\n  b: [x, y]\n"), ("a:\n  b: [x, y]\n", "a: [\n  b: [x, y]\n]\n"),
    ("a:\n  b: [x, y]\n", "a: \'q\n  b: [x, y]\'\n"), ("a:\n  b: [x, y]\n", "a: b\n  b: [x, y]\n"),
    ("- x\n- b: c\n", "k: >-\n- x\n- b: c\n"), ("a:\n  # c\n  b: 1\n", 'a: "q\n  # c\n  b: 1"\n'),
    ("a: 1\n---\nb: 2\n", "a: |\n  x\n---\nb: 2\n"), ("a:\n  - x\n", "a: {\n  - x\n}\n"),
    ("k: 010\n", "a: |\nk: 010\n"), ("k: [010, 1:30]\n", "a: [\nk: [010, 1:30]\n]\n"),
]


@pytest.mark.parametrize("first, second", _CONTEXTS)
def test_a_remembered_line_in_another_context(first: str, second: str) -> None:
    for order in ((first, second, first), (second, first, second)):
        for text in order:
            assert_same(text)


def test_a_files_values_are_its_own() -> None:
    """Lines are remembered across files; the lists and mappings built of them are each file's own."""
    text = "a: [x, y]\nb: {c: d}\nn: [[1], {e: f}]\n"
    first = load_documents(text)[0].data
    first["a"].append("z")
    first["b"]["q"] = 1
    first["n"][0].append(2)
    first["n"][1]["g"] = 1
    second = load_documents(text)[0]
    assert second.data == {"a": ["x", "y"], "b": {"c": "d"}, "n": [[1], {"e": "f"}]}
    assert second.position(("n", 1, "g")) == (3, 10)  # the mapping {e: f}: the added key is not there


@pytest.mark.parametrize("name, value", [("MAX_DEPTH", 3), ("MAX_SCALAR_CHARS", 4), ("MAX_NUMBER_CHARS", 3)])
def test_a_lowered_limit_still_refuses(monkeypatch, name: str, value: int) -> None:
    monkeypatch.setattr(yaml_positions, name, value)
    with pytest.raises(YamlSyntaxError):
        load_documents("a:\n  b:\n    c:\n      d: [12345, xxxxxx]\n")


def test_the_full_path_without_libyaml(monkeypatch) -> None:
    """Where PyYAML has no libyaml, the full path composes with its pure-Python loader, which reads some flow
    scalars otherwise (`[a?:b]`): the fast path agrees with that loader too, or declines."""
    class PureLoader(yaml.SafeLoader):
        resolve = staticmethod(yaml_positions._resolve)

    monkeypatch.setattr(yaml_positions, "_TagMemoLoader", PureLoader)
    monkeypatch.setattr(yaml_positions, "_Loader", yaml.SafeLoader)
    flows = [f"k: [{value}]\n" for value in VALUES] + [f"k: {{a: {value}}}\n" for value in VALUES]
    for text in [t for t in HOSTILE if len(t) < 5_000] + flows + [f"k: {value}\n" for value in VALUES]:
        assert_same(text)


def test_the_line_memo_forgotten_mid_file(monkeypatch) -> None:
    """The memo is cleared when full, in the middle of a file too: the lines read before stay the file's."""
    monkeypatch.setattr(yaml_fast, "_MAX_LINES_KEPT", 3)
    for text in [BASE, FLEET, "a:\n- x: [1, {b: 010}]\n  y: 2\n- z\n---\nb: {c: [d, e]}\n"] * 2:
        assert assert_same(text, MAX_ITEMS)


@pytest.mark.parametrize("text", ["a: 1\n" * 20_000, "- a: 1\n" + "  a: 1\n" * 20_000,
                                  "a: [" + ", ".join(["010"] * 11_000) + "]\n"])
def test_many_duplicates_or_yaml11_numbers_cost_linear_time(text: str) -> None:
    """Each duplicate key counted the document's lines again, and each YAML 1.1 number copied a flow's tuple: 20,000
    repeated keys took ~15 s of CPU, 11,000 `010` on one line ~0.4 (the full path: ~0.1 each)."""
    start = time.process_time()
    fast = fast_documents(text, MAX_ITEMS)
    spent = time.process_time() - start
    assert fast is not None and spent < 1.5
    full = load_composed(text, max_items=MAX_ITEMS)
    assert fast[0].duplicate_keys == full[0].duplicate_keys
    assert fast[0].yaml11_numbers == full[0].yaml11_numbers


@pytest.mark.parametrize("text, listed", [
    ("yes: 1\nname: a\n", [((), True, "yes")]),
    ("a:\n  3: 8GiB\n  Off: 1\n", [(("a",), 3, "3"), (("a",), False, "Off")]),
    ("- ~: 1\n  2024-01-01: 2\n", [((0,), None, "~"), ((0,), datetime.date(2024, 1, 1), "2024-01-01")]),
    ("c: {3: 8GiB, b: [{1.5: x}], on: y}\n", [(("c", "b", 0), 1.5, "1.5"), (("c",), 3, "3"), (("c",), True, "on")]),
    ("'yes': 1\n\"3\": 2\na: {x: 1}\n", []),  # quoted: text
])
def test_keys_yaml_reads_as_no_text_are_listed_alike_on_both_paths(text: str, listed: list) -> None:
    """Keys read as a boolean, number, null or date are listed (settings files refuse them where no number
    belongs), the same on the fast path (a fleet's `claims: {3: 8GiB}` stays on it) as composed."""
    assert assert_same(text, MAX_ITEMS)
    assert sorted(map(repr, fast_documents(text, MAX_ITEMS)[0].non_text_keys)) == sorted(map(repr, listed))
