"""A mapping key past YAML's 1,024-character limit for an implicit key (round 21): one GSG017 input-limit at the
key's start naming the limit. Before: GSG001 "could not find expected ':'" at the column past the key (7:200001)."""

from __future__ import annotations

import pytest
from support import FLEET

from gpustack_guard.adapters.files.yaml_documents import load_documents
from gpustack_guard.adapters.files.yaml_positions import YamlInputLimit, YamlSyntaxError


@pytest.mark.parametrize("length", [1025, 5_000, 200_000])
def test_a_key_past_1024_characters_is_an_input_limit_at_the_key(length):
    with pytest.raises(YamlInputLimit) as caught:
        load_documents("name: x\n  \n" + "k" * length + ": 1\n")
    assert (str(caught.value), caught.value.line, caught.value.column) == (
        "a key of more than 1,024 characters (YAML's limit for a key)", 3, 1)


def test_a_key_of_1024_characters_reads():
    assert load_documents("k" * 1024 + ": 1\n")[0].data == {"k" * 1024: 1}


def test_a_short_line_without_a_colon_keeps_the_parsers_words():
    with pytest.raises(YamlSyntaxError) as caught:
        load_documents("name: x\n" + "k" * 100 + " 1\nb: 2\n")
    assert not isinstance(caught.value, YamlInputLimit)
    assert str(caught.value) == "could not find expected ':'"


def test_a_long_key_in_a_spec_is_gsg017_at_its_line(gsg, tmp_path):
    (tmp_path / "a.yaml").write_text("name: x\nsource: huggingface\n" + "k" * 3000 + ": 1\n")
    result = gsg("validate", str(tmp_path / "a.yaml"), "--fleet", str(FLEET), "--offline")
    assert result.code == 1
    assert result.out.splitlines()[0] == (f"{tmp_path / 'a.yaml'}:3:1: error GSG017 input-limit: a key of more than "
                                          "1,024 characters (YAML's limit for a key)")
