"""yaml_plain gives the tag PyYAML's SafeLoader gives an unquoted scalar, and the value yaml.safe_load builds, on
every plain scalar of the repository's YAML and on generated texts around each implicit type's edges."""

from __future__ import annotations

import itertools
import random

import pytest
import yaml
from support import REPO

from gpustack_guard.adapters.files import yaml_plain
from gpustack_guard.adapters.files.yaml_plain import NOT_BUILT, plain_tag, plain_value

_PYYAML = yaml.resolver.Resolver()


def pyyaml_tag(text: str) -> str:
    return _PYYAML.resolve(yaml.ScalarNode, text, (True, False))


def repository_plain_scalars() -> set[str]:
    found: set[str] = set()
    for path in sorted(REPO.rglob("*.yaml")) + sorted(REPO.rglob("*.yml")):
        if ".venv" in path.parts or ".git" in path.parts:
            continue
        try:
            tokens = list(yaml.scan(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader))
        except (yaml.YAMLError, UnicodeDecodeError):
            continue  # the negative examples hold broken YAML on purpose
        found.update(t.value for t in tokens if isinstance(t, yaml.ScalarToken) and t.plain and "\n" not in t.value)
    return found


# Short texts over the characters the implicit types are written in: every one up to three characters, then a
# seeded sample of longer ones, and each type's edges written out.
_ALPHABET = "0179_-+.:eExXbBoO8aAfFnNiI~<=tTzZ yl\t"
EDGES = [
    "", "~", "null", "Null", "NULL", "nULL", "yes", "Yes", "YES", "yEs", "y", "n", "on", "ON", "oN", "off", "OFF",
    "true", "tRUE", "False", "<<", "<", "=", "==", "0", "-0", "+0", "00", "07", "08", "0_7", "0b", "0b1", "0b_",
    "0b12", "0x", "0x1F", "0xg", "0x_", "1_000", "_1", "1_", "1:30", "1:60", "1:5", "-1:30:15", "0:30", "1:30.5",
    "1.", ".5", "._5", "-.5", "+.5", "1e3", "1.e3", "1.0e3", "1.0e+3", "1.0E-3", "1.0e3x", ".inf", "-.inf", "+.inf",
    ".Inf", ".INF", ".iNF", ".nan", "-.nan", ".NaN", ".NAN", "inf", "nan", "2001-12-14", "2001-12-1",
    "2001-1-14 1:02:03", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2001-12-14\t21:59:43Z",
    "2001-12-14  21:59:43.10 +05:30", "2001-12-14T21:59:43", "2001-12-14T21:59", "20011-12-14", "2001-12-145",
    "0.11.0", "0.5.5", "46068MiB", "--max-model-len=8192", "-x", "+x", "node-001:cuda:0", "NVIDIA L40S",
    "1\u0660", "\u0661", "١٢", "+", "-", ".", "1 ", " 1", "1\t", "12345678901234567890", "0.4", "0.95", "-1.5",
]


def generated(count: int = 60_000) -> list[str]:
    texts = ["".join(chars) for size in range(1, 4) for chars in itertools.product(_ALPHABET, repeat=size)]
    rng = random.Random(7)
    shapes = "0123456789_-+.:eExbo"
    texts += ["".join(rng.choice(shapes) for _ in range(rng.randint(4, 14))) for _ in range(count)]
    separators, fractions, zones = ["", "T", "t", " ", "  ", "\t"], ["", ".", ".5", ".123"], \
        ["", "Z", " Z", "+5", "-05:00", " +5:30", "x"]
    texts += [f"{rng.randint(0, 9999):04d}-{rng.randint(0, 99)}-{rng.randint(0, 99)}{rng.choice(separators)}"
              f"{rng.randint(0, 99)}:{rng.randint(0, 99):02d}:{rng.randint(0, 99):02d}{rng.choice(fractions)}"
              f"{rng.choice(zones)}" for _ in range(5_000)]
    return texts


def test_every_plain_scalar_of_the_repository_has_pyyamls_tag():
    scalars = repository_plain_scalars()
    assert len(scalars) > 500  # the specs, examples, templates, fixtures and workflows of the repository
    wrong = [(s, plain_tag(s), pyyaml_tag(s)) for s in scalars if plain_tag(s) != pyyaml_tag(s)]
    assert wrong == []


def test_edges_and_generated_texts_have_pyyamls_tag():
    texts = EDGES + generated()
    wrong = [(s, plain_tag(s), pyyaml_tag(s)) for s in texts if plain_tag(s) != pyyaml_tag(s)]
    assert wrong == []
    # the sample reaches every implicit type, so a pattern that matched nothing would fail above
    assert {plain_tag(s) for s in texts} == {yaml_plain.STR, yaml_plain.INT, yaml_plain.FLOAT, yaml_plain.BOOL,
                                            yaml_plain.NULL, yaml_plain.TIMESTAMP, yaml_plain.MERGE,
                                            yaml_plain.VALUE}


def _safe_loaded(text: str):
    # libyaml's loader where PyYAML has it: the same resolver and constructor as safe_load, several times faster
    return yaml.load(f"k: {text}\n", Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["k"]


@pytest.mark.parametrize("text, value", [
    ("16", 16), ("-0", 0), ("+7", 7), ("0.4", 0.4), ("1.", 1.0), ("-0.0", -0.0), ("007.5", 7.5), ("yes", True),
    ("OFF", False), ("~", None), ("null", None), ("0.11.0", "0.11.0"), ("46068MiB", "46068MiB"),
])
def test_the_values_built_here_are_safe_loads(text: str, value) -> None:
    built = plain_value(plain_tag(text), text, 1_000)
    assert built == value and type(built) is type(value) and built == _safe_loaded(text)


@pytest.mark.parametrize("text", ["010", "0x1F", "0b101", "1_000", "1:30", "1.0e+3", ".inf", ".nan", "2001-12-14",
                                  "<<", "=", "1" * 1_001])
def test_other_numbers_dates_and_long_numbers_are_left_to_pyyaml(text: str) -> None:
    assert plain_value(plain_tag(text), text, 1_000) is NOT_BUILT


def test_every_value_built_here_is_what_safe_load_builds():
    texts = [s for s in EDGES + generated(20_000) if s and s == s.strip() and "\t" not in s and ": " not in s
             and not s.startswith(("-", "?", ":", "#", "&", "*", "!", "|", ">", "'", '"', "%", "@", "`", "<<", "="))]
    built = 0
    for text in texts:
        value = plain_value(plain_tag(text), text, 1_000)
        if value is NOT_BUILT:
            continue
        try:
            loaded = _safe_loaded(text)
        except yaml.YAMLError:
            continue  # not a one-line plain scalar after `k: ` (e.g. `a #b` starts a comment)
        assert (value, type(value)) == (loaded, type(loaded)), text
        built += 1
    assert built > 5_000


# The shapes plain_tag decides before the resolver's patterns (compiled only past them: ~6.6 M instructions),
# with their neighbours on both sides of each shape's edge.
@pytest.mark.parametrize("text", [
    "--max-model-len=8192", "-", "+", "-x", "+a", "--", "-1", "+1", "-.5", "+.5", "-.inf", "+.inf", "-0", "-01",
    "0", "7", "-7", "+7", "007", "1_0", "1.5", "-1.5", "1.", "+1.", "0.6.4", "10.0.0.1", "0.6.4.", "0.6", "1..2",
    "24GiB", "8k", "1e5", "1e+5", "1.0e+5", "0x1F", "0xAB", "0b", "0x", "0b1", "1a2", "12:30", "2001-12-14",
    "2001-12-14t21:59:43.10-05:00", "1-2", "1.5GiB", "0GiB", "00GiB",
])
def test_the_shapes_decided_first_have_pyyamls_tag(text: str) -> None:
    assert yaml_plain.plain_tag(text) == pyyaml_tag(text)
