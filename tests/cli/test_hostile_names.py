"""Names a careless or hostile spec can carry (issue 31): invisible or control characters and surrounding spaces
are schema errors, a name that only looks like another spec's is a duplicate, and spec files count in any letter
case of their suffix."""

import pytest
from support import FLEET, REPO

BASE = (REPO / "specs" / "llama-8b.yaml").read_text()


def _spec(folder, file, name):
    folder.mkdir(exist_ok=True)
    (folder / file).write_text(BASE.replace("name: llama-8b", f"name: {name}", 1))


@pytest.mark.parametrize("name,says", [
    ('" llama"', "has a space before or after it"),
    ('"llama "', "has a space before or after it"),
    ('"lla\\u202ema"', "holds U+202E (RIGHT-TO-LEFT OVERRIDE)"),
    ('"lla\\u200dma"', "holds U+200D (ZERO WIDTH JOINER)"),
    ('"lla\\u0000ma"', "holds U+0000"),
    ('"lla\\nma"', "holds U+000A"),
    ('"lla\\u2028ma"', "holds U+2028"),
])
def test_invisible_or_padded_names_are_schema_errors(gsg, tmp_path, name, says):
    _spec(tmp_path / "s", "a.yaml", name)
    result = gsg("validate", str(tmp_path / "s"), "--fleet", str(FLEET), "--offline")
    assert result.code == 1 and "error GSG002 schema" in result.out and says in result.out, result.out


@pytest.mark.parametrize("other", ["LLAMA-8B", "llаma-8b", "ｌｌａｍａ-8b", "Llama-8B"])  # case, Cyrillic а, fullwidth
def test_a_name_that_only_looks_like_another_is_a_duplicate(gsg, tmp_path, other):
    _spec(tmp_path / "s", "a.yaml", "llama-8b")
    _spec(tmp_path / "s", "b.yaml", other)
    result = gsg("validate", str(tmp_path / "s"), "--fleet", str(FLEET), "--offline")
    assert f"error GSG005 duplicate-name [{other}]: model name '{other}' looks the same as 'llama-8b'" in result.out


def test_names_that_differ_visibly_are_not_duplicates(gsg, tmp_path):
    _spec(tmp_path / "s", "a.yaml", "llama-8b")
    _spec(tmp_path / "s", "b.yaml", "llama-8b-2")
    result = gsg("validate", str(tmp_path / "s"), "--fleet", str(FLEET), "--offline")
    assert "GSG005" not in result.out and "GSG002" not in result.out


@pytest.mark.parametrize("file", ["A.YAML", "b.Yml", "c.yml", "d.yaml"])
def test_spec_suffixes_count_in_any_case(gsg, tmp_path, file):
    _spec(tmp_path / "s", file, "llama-8b")
    result = gsg("validate", str(tmp_path / "s"), "--fleet", str(FLEET), "--offline")
    assert "in 1 spec (1 file)" in result.err, result.err
