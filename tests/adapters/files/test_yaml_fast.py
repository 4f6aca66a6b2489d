"""yaml_fast against the composed path it shortcuts: on every YAML file of the repository and on the neighbours
of a spec's common shape (one line changed at a time), the fast path either declines or gives the same data
(types too), start line, duplicate keys, YAML 1.1-only numbers, positions and plain texts."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from gpustack_guard.adapters.files import yaml_positions
from gpustack_guard.adapters.files.yaml_documents import load_documents
from gpustack_guard.adapters.files.yaml_fast import fast_documents
from gpustack_guard.adapters.files.yaml_positions import (
    MAX_ITEMS,
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

    from gpustack_guard.adapters.files import yaml_fast

    whole = re.compile(yaml_fast._REFUSED_PATTERN)
    characters = [chr(c) for c in range(0x3000)] + ["\ufeff", "\ufffe", "\uffff", "\U0001f600", "\U0010ffff"]
    for c in characters:
        for text in (c, f"name: a{c}\n", f"name: \u00e9{c}\n"):
            assert yaml_fast._has_refused_character(text) is (whole.search(text) is not None), repr(text)
    assert yaml_fast._has_refused_character("a\rb") and yaml_fast._has_refused_character("a\tb")
    assert not yaml_fast._has_refused_character("name: caf\u00e9\n")
