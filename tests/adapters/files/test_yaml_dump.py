"""adapters/files/yaml_dump.py: YAML written by the serializer; server text is data, never keys or lines."""

import pytest
import yaml

from gpustack_guard.adapters.files.yaml_dump import comment, dump, dump_all
from gpustack_guard.core.echo import has_unsafe

HOSTILE_VALUES = [
    "v2.3.0\nrun_command: evil",
    "x\n---\nname: other",
    "x\r\nenv:\n  LD_PRELOAD: /tmp/evil.so",
    "x\x85run_command: evil",  # NEL is a YAML line break
    "x\u2028run_command: evil",  # so are the Unicode line and paragraph separators
    "x\u2029run_command: evil",
    "# not a comment",
    "key: value",
    "- item",
    "&anchor *alias !!python/object:os.system",
    "\x1b[2J\x1b]0;t\x07\x08\x00\x7f\x9b\u202e\u2066\u200b\ufeff\U000e0041",
    "'\"\\",
    "",
    " leading and trailing ",
]


@pytest.mark.parametrize("hostile", HOSTILE_VALUES)
def test_hostile_text_round_trips_as_one_value(hostile):
    data = {"name": hostile, "description": hostile, "meta": {hostile: hostile}, "list": [hostile]}
    text = dump(data)
    assert yaml.safe_load(text) == data  # the same keys, the same values
    assert not has_unsafe(text.replace("\n", ""))  # escaped where unsafe, so the file shows what it holds


def test_unsafe_scalars_are_double_quoted_with_escapes_and_others_keep_their_letters():
    text = dump({"a": "通义\u202e", "b": "通义", "c": "x\x1b[31m"})
    assert text == 'a: "\\u901A\\u4E49\\u202E"\nb: 通义\nc: "x\\e[31m"\n'


def test_without_unicode_every_non_ascii_letter_is_escaped():
    assert dump({"b": "通义"}, allow_unicode=False) == 'b: "\\u901A\\u4E49"\n'


def test_documents_are_separated():
    text = dump_all([{"name": "a\n---\nname: b"}, {"name": "c"}])
    assert list(yaml.safe_load_all(text)) == [{"name": "a\n---\nname: b"}, {"name": "c"}]


@pytest.mark.parametrize("hostile", HOSTILE_VALUES)
def test_a_comment_is_one_line_that_adds_nothing(hostile):
    line = comment(f"from GPUStack {hostile}")
    assert line.startswith("# ") and line.endswith("\n") and line.count("\n") == 1
    assert yaml.safe_load(line + "name: m\n") == {"name": "m"}
    assert "\u2028" not in line and "\x85" not in line
