import pytest
import yaml

from gpustack_guard.adapters.files.yaml_documents import load_documents
from gpustack_guard.adapters.files.yaml_positions import YamlSyntaxError


def test_positions_of_keys_and_values_are_one_based():
    docs = load_documents("a: 1\nb:\n  - x\n  - {c: 2}\n")
    doc = docs[0]
    assert doc.data == {"a": 1, "b": ["x", {"c": 2}]}
    assert doc.position(("b",), key=True) == (2, 1)
    assert doc.position(("b",)) == (3, 3)
    assert doc.position(("b", 1, "c")) == (4, 9)
    assert doc.position(("b", 1, "c"), key=True) == (4, 6)
    assert doc.position(("b", 1, "missing")) == (4, 5)  # nearest existing ancestor


def test_multiple_documents_and_empty_ones_skipped():
    docs = load_documents("---\na: 1\n---\n---\nb: 2\n")
    assert [d.data for d in docs] == [{"a": 1}, {"b": 2}]
    assert docs[1].start_line == 5


def test_duplicate_keys_are_recorded_not_silently_dropped():
    doc = load_documents("a: 1\na: 2\n")[0]
    assert doc.data == {"a": 2}
    assert doc.duplicate_keys == [(("a",), 2, 1)]


def test_syntax_error_has_line_and_column_of_the_cause():
    with pytest.raises(YamlSyntaxError) as err:
        load_documents("a: [1, 2\nb: 3\n")
    assert (err.value.line, err.value.column) == (1, 4)  # the '[' that is never closed, not where it was noticed


def test_merge_keys_and_aliases():
    doc = load_documents("base: &b {x: 1}\nchild:\n  <<: *b\n  y: 2\n")[0]
    assert doc.data["child"] == {"x": 1, "y": 2}


def test_memoised_tags_match_pyyaml_for_repeated_and_long_scalars():
    # the loader memoises implicit tags (scale benchmark); a value seen before must still resolve as PyYAML does
    text = "a: 1\nb: '1'\nc: 1.5\nd: ~\ne: yes\nf: 0x1F\ng: 2001-12-14\nh: " + "9" * 300 + "\ni: text\n"
    expected = yaml.load(text, Loader=yaml.SafeLoader)
    for _ in range(2):
        assert load_documents(text)[0].data == expected
    assert load_documents("k: '1'\n")[0].data == {"k": "1"}
    assert load_documents("k: 1\n")[0].data == {"k": 1}


def test_documents_without_aliases_build_as_those_with_them():
    """The alias-free path (no recursion watch) builds the same data, duplicates and positions as the watched one."""
    from gpustack_guard.adapters.files.yaml_documents import load_documents

    body = "name: a\nguard:\n  vars: {x: 1, y: [a, b]}\n  vars: {z: 2}\nlist:\n  - {k: v}\n  - [1, 2.5, true, null]\n"
    plain = load_documents(body)[0]
    watched = load_documents(body + "anchor: &one 1\nalias: *one\n")[0]
    assert {k: v for k, v in watched.data.items() if k not in ("anchor", "alias")} == plain.data == {
        "name": "a", "guard": {"vars": {"z": 2}}, "list": [{"k": "v"}, [1, 2.5, True, None]]}
    assert watched.duplicate_keys == plain.duplicate_keys == [(("guard", "vars"), 4, 3)]
    assert watched.position(("list", 1, 2)) == plain.position(("list", 1, 2)) == (7, 14)
