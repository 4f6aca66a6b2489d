"""YAML tags (issue 31): a gsg file holds plain values, so the only tags it may carry are YAML's core scalars
(!!str, !!int, !!float, !!bool, !!null, !!timestamp) on text of that kind, and !!seq / !!map on lists and
mappings. Every other tag, on a scalar, a list, a mapping, a key or a merged mapping, is one YamlSyntaxError at
its line (GSG001 in a spec, one `gsg: error:` line in a settings file); never a crash, never silently read."""

import pytest

from gpustack_guard.adapters.files.yaml_documents import load_documents
from gpustack_guard.adapters.files.yaml_positions import YamlSyntaxError

UNSUPPORTED = {
    "!!binary aGk=": "!!binary",
    "!!python/object:os.system {}": "!!python/object:os.system",
    "!!python/name:os.system ''": "!!python/name:os.system",
    "!!python/tuple [1]": "!!python/tuple",
    "!<tag:yaml.org,2002:python/tuple> [1]": "!!python/tuple",
    "!!set {a, b}": "!!set",
    "!!omap [a: 1, b: 2]": "!!omap",
    "!!pairs [a: 1]": "!!pairs",
    "!foo {a: 1}": "!foo",
    "!foo [1]": "!foo",
    "!foo bar": "!foo",
    "!!str {a: 1}": "!!str",
    "!!int [1]": "!!int",
    "!!map x": "!!map",
    "!!seq x": "!!seq",
    "!!merge x": None,
    "!<tag:example.com,2000:app/foo> x": "tag:example.com,2000:app/foo",
}

WRONG_KIND = {
    "!!bool maybe": "'maybe' is not a valid bool",
    "!!bool 1": "'1' is not a valid bool",
    "!!int x": "'x' is not a valid int",
    "!!int 1.5": "'1.5' is not a valid int",
    "!!float x": "'x' is not a valid float",
    "!!null x": "'x' is not a valid null",
    "!!timestamp nope": "'nope' is not a valid timestamp",
    "!!timestamp 12": "'12' is not a valid timestamp",
    "!!timestamp 2001-13-45": "invalid timestamp '2001-13-45': month must be in 1..12",
}

ALLOWED = {"!!str 12": "12", "!!int 12": 12, "!!float 12": 12.0, "!!float 1.5": 1.5, "!!bool yes": True,
           "!!null ~": None, "!!null ''": None, "!!seq [1]": [1], "!!map {a: 1}": {"a": 1}, "! 12": 12}  # `!` as PyYAML reads it


def _places(value: str):
    """The same tagged value as a top-level value, nested in a list, nested in a mapping, and as a key."""
    yield f"a: {value}\n", (1, 4)
    yield f"a:\n  - x\n  - {value}\n", (3, 5)
    yield f"a:\n  b:\n    c: {value}\n", (3, 8)
    yield f"a: 1\n? {value}\n: 2\n", (2, 3)


@pytest.mark.parametrize("value", sorted(UNSUPPORTED))
def test_a_tag_gsg_does_not_read_is_refused_where_it_is_written(value):
    for text, where in _places(value):
        with pytest.raises(YamlSyntaxError) as caught:
            load_documents(text)
        error, message = caught.value, str(caught.value)
        if text.startswith("a: 1\n?") and value.startswith(("!!merge", "!foo {", "!foo [", "!!python/object",
                                                                 "!!python/tuple", "!<tag:yaml.org,2002:python",
                                                                 "!!set", "!!omap", "!!pairs", "!!str {",
                                                                 "!!int [")):
            continue  # as a key: a list or mapping is no key, `<<` needs a mapping (test_yaml_limits.py)
        assert (error.line, error.column) == where, text
        if value.startswith("!!merge"):
            assert message == "'x' is a merge key, not a value: quote it"
        else:
            assert message == (f"YAML tag '{UNSUPPORTED[value]}' is not supported: gsg files hold plain strings, "
                               "numbers, true/false, null, lists and mappings (remove the tag, or quote the value)")


@pytest.mark.parametrize("value", sorted(WRONG_KIND))
def test_a_core_tag_on_text_of_another_kind_is_refused(value):
    for text, where in _places(value):
        with pytest.raises(YamlSyntaxError) as caught:
            load_documents(text)
        assert str(caught.value) == WRONG_KIND[value]
        assert (caught.value.line, caught.value.column) == where


@pytest.mark.parametrize("value", sorted(ALLOWED))
def test_core_tags_on_text_of_their_kind_are_read(value):
    got = load_documents(f"a: {value}\n")[0].data["a"]
    assert got == ALLOWED[value] and type(got) is type(ALLOWED[value])


def test_a_tagged_mapping_merged_with_a_merge_key_is_refused_too():
    with pytest.raises(YamlSyntaxError) as caught:
        load_documents("base: &b !!set {x}\nchild:\n  <<: *b\n")
    assert str(caught.value).startswith("YAML tag '!!set' is not supported") and caught.value.line == 1


def test_a_long_tag_is_shown_capped():
    with pytest.raises(YamlSyntaxError) as caught:
        load_documents("a: !" + "x" * 5_000 + " 1\n")
    assert str(caught.value).startswith("YAML tag '!" + "x" * 39 + "...' is not supported")
