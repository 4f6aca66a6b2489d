"""The shared YAML loader's limits (GSG017), syntax errors at the line of their cause (GSG001) and merge keys."""

import time

import pytest

from gpustack_guard.adapters.files import yaml_positions as Y
from gpustack_guard.adapters.files.yaml_documents import load_documents
from gpustack_guard.adapters.files.yaml_positions import YamlInputLimit, YamlSyntaxError

LAUGHS = ('name: lol\na: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
          + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8)))


def _refused(text: str) -> YamlInputLimit:
    start = time.process_time()
    with pytest.raises(YamlInputLimit) as caught:
        load_documents(text)
    assert time.process_time() - start < 1.0
    return caught.value


def test_billion_laughs_is_refused_at_the_alias_that_passes_the_limit():
    limit = _refused(LAUGHS)
    # a: 9 values, b: 9x10, c: 9x91 ... line 6 (e:) is where the running count first passes 10,000
    assert (limit.line, limit.column) == (6, 8)
    assert str(limit) == ("aliases expand to more than 10,000 nodes (15,670 up to this one): not a spec, possibly "
                          "a 'billion laughs' document")


def test_merges_that_double_at_each_level_are_counted_like_aliases():
    text = "a: &a {x: 1, y: 2}\n" + "".join(
        f"m{i}: &m{i} {{<<: [*{'a' if i == 0 else f'm{i - 1}'}, *{'a' if i == 0 else f'm{i - 1}'}], k{i}: 1}}\n"
        for i in range(40))
    limit = _refused(text)
    assert limit.line == 10 and "aliases expand to more than 10,000 nodes" in str(limit)


def test_a_few_shared_mappings_stay_well_within_the_alias_limit():
    text = "defaults: &d {a: 1, b: 2, c: 3}\n" + "".join(f"s{i}: {{<<: *d, n: {i}}}\n" for i in range(500))
    docs = load_documents(text)
    assert docs[0].data["s499"] == {"a": 1, "b": 2, "c": 3, "n": 499}


@pytest.mark.parametrize(("text", "where"), [
    ("name: x\nv: " + "[" * 100 + "]" * 100 + "\n", (2, 67)),  # the 65th '['
    ("name: x\n" + "".join("  " * i + "k:\n" for i in range(80)) + "  " * 80 + "v\n", (66, 129)),
    ("name: x\nv: " + "[" * 2000 + "]" * 2000 + "\n", (2, 1003)),  # libyaml's own stop at 1,000 levels
])
def test_nesting_beyond_64_levels_is_refused_where_it_gets_too_deep(text, where):
    limit = _refused(text)
    assert ((limit.line, limit.column), str(limit)) == (where, "nested more than 64 levels deep")


def test_64_levels_are_read():
    docs = load_documents("v: " + "[" * 63 + "1" + "]" * 63 + "\n")
    value = docs[0].data["v"]
    for _ in range(62):
        value = value[0]
    assert value == [1]


def test_documents_per_file_are_bounded(monkeypatch):
    assert Y.MAX_DOCUMENTS == 100_000  # room for an export of 50,000 parked models in one file
    monkeypatch.setattr(Y, "MAX_DOCUMENTS", 2_000)  # the same check, at a size a unit test builds quickly
    limit = _refused("---\na: 1\n" * 2_001)
    assert (limit.line, str(limit)) == (4_001, "more than 2,000 documents in one file: split it")
    assert len(load_documents("---\na: 1\n" * 2_000)) == 2_000


def test_one_value_and_one_number_are_bounded():
    limit = _refused("a: 1\nb: " + "x" * (Y.MAX_SCALAR_CHARS + 1) + "\n")
    assert (limit.line, limit.column, str(limit)) == (2, 4, "a value of 65,537 characters (limit 65,536)")
    limit = _refused("a: " + ":".join(["59"] * 3000) + "\n")  # a base-60 int: quadratic to build
    assert (limit.line, str(limit)) == (1, "a number of 8,999 characters (limit 1,000)")
    assert load_documents("a: " + "9" * 1000 + "\n")[0].data["a"] == int("9" * 1000)


@pytest.mark.parametrize(("text", "line", "column", "message"), [
    ("name: a\nsource: hf\nrepo: [x, y\nbackend: vLLM\n", 3, 7,
     "'[' opened here is not closed (did not find expected ',' or ']' at line 4, column 8)"),
    ("name: a\nsource: hf\nrepo: {x: 1\nbackend: vLLM\n", 3, 7,
     "'{' opened here is not closed (did not find expected ',' or '}' at line 4, column 8)"),
    ('name: a\nsource: "hf\nrepo: x\n', 2, 9,
     "quote opened here is not closed (found unexpected end of stream at line 4, column 1)"),
    ("name: a\nrepo: [x, y}\n", 2, 12, "did not find expected ',' or ']'"),  # closed wrongly on its own line
    ("name: a\nguard:\n    template: x\n  vars: 1\n", 4, 3, "did not find expected key"),
    ("name: a\nguard:\n  template: x\n   vars: 1\n", 4, 8,
     "mapping values are not allowed in this context: quote a value that holds ': ', or indent the key under its "
     "parent"),
    ("name: a\nsource: value: x\n", 2, 14,
     "mapping values are not allowed in this context: quote a value that holds ': ', or indent the key under its "
     "parent"),
    ("name: a\nb: *x\n", 2, 4, "undefined alias '*x' (no anchor of that name above it)"),
    ("a: &x 1\nb: &x 2\nc: *x\n", 2, 4, "duplicate anchor (first defined at line 1)"),
    ("name: a\nguard:\n\ttemplate: x\n", 3, 1, "tab character in indentation (YAML indents with spaces only)"),
    ("name: a\nguard:\n  template: x\n\tvars: 1\n", 4, 1, "tab character in indentation (YAML indents with spaces only)"),
    ("name: é€😀\nsource: h\x00f\n", 2, 10, "character U+0000 is not allowed in YAML (control characters are not "
     "allowed); remove it or write it as an escape in a double-quoted string"),
    ("name: a\nsource: h\x07f\n", 2, 10, "character U+0007 is not allowed in YAML (control characters are not "
     "allowed); remove it or write it as an escape in a double-quoted string"),
    ("name: a\nb: 1\nc: 2001-13-45\n", 3, 4, "invalid timestamp '2001-13-45': month must be in 1..12"),
    ("a:\n  <<: 3\n", 2, 7, "`<<` merges a mapping or a list of mappings (an alias such as *defaults)"),
])
def test_syntax_errors_point_at_their_cause(text, line, column, message):
    with pytest.raises(YamlSyntaxError) as caught:
        load_documents(text)
    assert not isinstance(caught.value, YamlInputLimit)
    assert (caught.value.line, caught.value.column, str(caught.value)) == (line, column, message)


def test_a_key_that_overrides_a_merge_is_no_duplicate_and_points_at_the_override():
    doc = load_documents("base: &b {x: 1, y: 2}\nchild:\n  <<: *b\n  y: 3\n")[0]
    assert doc.data["child"] == {"x": 1, "y": 3}
    assert doc.duplicate_keys == []
    assert doc.position(("child", "y")) == (4, 6)  # the override, not the merged y of line 1
    assert doc.position(("child", "x")) == (1, 14)  # merged: where its value is written


def test_a_real_duplicate_beside_a_merge_is_still_one():
    doc = load_documents("base: &b {x: 1}\nchild:\n  <<: *b\n  y: 3\n  y: 4\n")[0]
    assert doc.data["child"] == {"x": 1, "y": 4}
    assert doc.duplicate_keys == [(("child", "y"), 5, 3)]


def test_a_list_of_merges_gives_the_first_listed_precedence():
    doc = load_documents("a: &a {x: 1, y: 1}\nb: &b {x: 2, z: 2}\nc:\n  <<: [*a, *b]\n  w: 0\n")[0]
    assert doc.data["c"] == {"x": 1, "z": 2, "y": 1, "w": 0}
    assert doc.duplicate_keys == []
    assert doc.position(("c", "x")) == (1, 11)  # a's x, the value the data holds
    assert doc.position(("c", "z")) == (2, 17)


def test_an_aliased_mapping_with_a_merge_is_read_alike_at_each_use():
    doc = load_documents("a: &a {x: 1}\nb: &b {<<: *a, y: 2}\nc: [*b, *b]\n")[0]
    assert doc.data["c"] == [{"x": 1, "y": 2}, {"x": 1, "y": 2}]
    assert doc.duplicate_keys == []


@pytest.mark.parametrize(("text", "where"), [
    ("v: " + "[" * 64 + "1" + "]" * 64 + "\n", (1, 67)),  # the root mapping and 64 sequences: the 64th '['
    ("".join("  " * i + "k:\n" for i in range(65)) + "  " * 65 + "v\n", (65, 129)),  # 65 block mappings
])
def test_65_levels_are_refused_by_our_own_check_not_libyaml(text, where):
    limit = _refused(text)  # libyaml's own stop is at 1,000 levels: this is MAX_DEPTH
    assert ((limit.line, limit.column), str(limit)) == (where, "nested more than 64 levels deep")


def test_64_block_mappings_are_read():
    value = load_documents("".join("  " * i + "k:\n" for i in range(64)) + "  " * 64 + "v\n")[0].data
    for _ in range(63):
        value = value["k"]
    assert value == {"k": "v"}


def test_an_implicit_first_document_counts_before_anything_is_built(monkeypatch):
    monkeypatch.setattr(Y, "MAX_DOCUMENTS", 2_000)  # 2,000 '---' and a first document without one: 2,001
    built = []
    monkeypatch.setattr(Y._Build, "value", lambda self, node, path: built.append(path))
    limit = _refused("a: 0\n" + "---\na: 1\n" * 2_000)
    assert (limit.line, str(limit), built) == (4_000, "more than 2,000 documents in one file: split it", [])


def test_one_pass_on_events_refuses_aliases_and_documents_alike(monkeypatch):
    monkeypatch.setattr(Y, "MAX_DOCUMENTS", 2_000)
    parses = []
    real_parse = Y.yaml.parse
    monkeypatch.setattr(Y.yaml, "parse", lambda text, Loader: parses.append(1) or real_parse(text, Loader=Loader))
    limit = _refused("a: &a 1\nb: *a\n" + "---\na: 1\n" * 2_000)
    assert (str(limit), len(parses)) == ("more than 2,000 documents in one file: split it", 1)


# --- the event prescan (_prescan, which dispatches on each event's class) at each limit and one past it -----------
def _prescanned(text: str, **options) -> YamlInputLimit | None:
    try:
        Y._prescan(text, **options)
    except YamlInputLimit as exc:
        return exc
    return None


@pytest.mark.parametrize("items", [5, 6])
@pytest.mark.parametrize("shape, where", [
    ("block list", (2, 3)), ("flow list", (2, 6)), ("block mapping", (2, 3)), ("flow mapping", (2, 6)),
    ("the document's mapping", (1, 1))])
def test_the_prescan_counts_items_of_each_collection_up_to_the_limit(shape, where, items):
    text = {"block list": "top:\n" + "".join(f"  - v{i}\n" for i in range(items)),
            "flow list": "top:\n  k: [" + ", ".join(f"v{i}" for i in range(items)) + "]\n",
            "block mapping": "top:\n" + "".join(f"  k{i}: v\n" for i in range(items)),
            "flow mapping": "top:\n  k: {" + ", ".join(f"k{i}: v" for i in range(items)) + "}\n",
            "the document's mapping": "".join(f"k{i}: v\n" for i in range(items))}[shape]
    limit = _prescanned(text, aliases=False, nodes=True, max_items=5)
    if items == 5:
        assert limit is None
        return
    assert limit is not None and (limit.line, limit.column) == where  # where the collection starts
    kind = "list of 6 items" if "list" in shape else "mapping of 6 keys"
    assert str(limit) == f"a {kind} or more (limit 5): not a file gsg reads"


def test_the_prescan_checks_items_only_when_counting_nodes():
    text = "top:\n" + "".join(f"  - v{i}\n" for i in range(6)) + "a: &a 1\nb: *a\n"
    assert _prescanned(text, aliases=True, nodes=False, max_items=5) is None
    assert _prescanned(text, aliases=True, nodes=True, max_items=5) is not None


@pytest.mark.parametrize("cap, where", [(40, (20, 6)), (41, (21, 1)), (42, (21, 7)), (43, (21, 8)), (44, None)])
def test_the_prescan_counts_nodes_to_the_one_that_passes_the_limit(monkeypatch, cap, where):
    monkeypatch.setattr(Y, "MAX_NODES", cap)
    # 41 nodes up to the mapping of 20 keys' last value (the mapping itself is one), then `last`, its list, its 1
    text = "".join(f"k{i}: v\n" for i in range(20)) + "last: [1]\n"
    limit = _prescanned(text, aliases=False, nodes=True)
    if where is None:
        assert limit is None
        return
    assert limit is not None and (limit.line, limit.column) == where
    assert str(limit) == f"more than {cap} values, lists and mappings in one file: split it"


@pytest.mark.parametrize("uses, refused", [(10, False), (11, True)])
def test_the_prescan_counts_alias_expansion_up_to_the_limit(monkeypatch, uses, refused):
    monkeypatch.setattr(Y, "MAX_ALIAS_EXPANSION", 40)
    text = "a: &a [1, 2, 3]\n" + "".join(f"k{i}: *a\n" for i in range(uses))  # each use reaches 4 nodes
    limit = _prescanned(text, aliases=True, nodes=False)
    assert (limit is not None) == refused
    if refused:
        assert (limit.line, limit.column) == (12, 6)
        assert str(limit).startswith("aliases expand to more than 40 nodes (44 up to this one)")


def test_the_prescan_reads_subclassed_events_as_their_class(monkeypatch):
    """A parser that yields subclasses of PyYAML's events (none does today) is read as the classes themselves are,
    not skipped: the same refusals at the same places."""
    texts = ["a: &a [1, 2, 3]\n" + "".join(f"k{i}: *a\n" for i in range(11)),
             "top:\n" + "".join(f"  - v{i}\n" for i in range(6)), "--- 1\n--- 2\n--- 3\n"]
    monkeypatch.setattr(Y, "MAX_ALIAS_EXPANSION", 40)
    monkeypatch.setattr(Y, "MAX_DOCUMENTS", 2)
    expected = [_prescanned(text, aliases=True, nodes=True, max_items=5) for text in texts]
    subclasses = {cls: type(f"Sub{cls.__name__}", (cls,), {}) for cls in Y._EVENT_KINDS}
    assert {Y._event_kind(object.__new__(sub)) for sub in subclasses.values()} == set(Y._EVENT_KINDS.values())
    real_parse = Y.yaml.parse

    def parse(text, Loader):
        for event in real_parse(text, Loader=Loader):
            copy = object.__new__(subclasses[type(event)])
            copy.__dict__.update(event.__dict__)
            yield copy

    monkeypatch.setattr(Y.yaml, "parse", parse)
    seen = [_prescanned(text, aliases=True, nodes=True, max_items=5) for text in texts]
    assert [(e.line, e.column, str(e)) for e in seen if e] == [(e.line, e.column, str(e)) for e in expected if e]
    assert all(expected) and all(seen)


# --- a large text the prescan is sure to pass is composed without it (docs/performance.md, twelfth round) -------
def _fleet_like(gpus: int) -> str:
    return "clusters:\n  gpus:\n" + "".join(f"  - {{index: {i}, name: NVIDIA L40S}}\n" for i in range(gpus))


def _outcome(text: str, *, prescan: bool, monkeypatch) -> object:
    """load_documents' values, or its error's class, text and place; with the prescan forced or left out."""
    with monkeypatch.context() as m:
        m.setattr(Y, "_within_limits_uncounted", lambda text, max_items: not prescan)
        try:
            return [d.data for d in load_documents(text)]
        except YamlSyntaxError as exc:
            return type(exc), str(exc), exc.line, exc.column


def test_a_large_single_document_skips_the_prescan_and_loads_the_same(monkeypatch):
    text = _fleet_like(5_000)
    assert Y.node_bound(text) > Y.COUNT_ABOVE and Y._within_limits_uncounted(text, Y.MAX_ITEMS)
    calls = []
    monkeypatch.setattr(Y, "_prescan", lambda *a, **k: calls.append(a))
    documents = load_documents(text)
    assert calls == [] and len(documents[0].data["clusters"]["gpus"]) == 5_000
    monkeypatch.undo()
    assert _outcome(text, prescan=False, monkeypatch=monkeypatch) == \
        _outcome(text, prescan=True, monkeypatch=monkeypatch)


@pytest.mark.parametrize("change", [
    lambda t: t + "---\na: 1\n",  # a second document
    lambda t: t + "...\n",  # a document end: a parser error could follow the first document's values
    lambda t: t.replace("clusters:", "clusters: &c", 1),  # an anchor: the composer's own errors
    lambda t: t + "x: [" + ",".join(["1"] * 20) + "]\n",  # separators enough for a collection over the limit
])
def test_a_text_the_counts_cannot_clear_is_prescanned(change):
    text = change(_fleet_like(5_000))
    assert not Y._within_limits_uncounted(text, 20)
    assert Y._within_limits_uncounted(_fleet_like(5_000), Y.MAX_ITEMS)


def test_over_the_node_cap_is_prescanned(monkeypatch):
    monkeypatch.setattr(Y, "MAX_NODES", 1_000)
    assert not Y._within_limits_uncounted(_fleet_like(5_000), Y.MAX_ITEMS)


@pytest.mark.parametrize("tail", [
    "  - {index: 1, name: [unclosed\n",  # a parser error at the end
    "  - {index: 1, name: x}\n]\n",  # a stray bracket closing the root mapping
    "  - {index: 1, name: x}\nclusters: again\n]\n",  # a duplicate key, then a parser error
    "  - {index: 1, name: " + "x" * (Y.MAX_SCALAR_CHARS + 1) + "}\n}\n",  # a value over its limit, then one
    "  - {index: 1, name: x}\n",  # no error
])
def test_errors_are_the_same_with_and_without_the_prescan(tail, monkeypatch):
    text = _fleet_like(5_000) + tail
    assert _outcome(text, prescan=False, monkeypatch=monkeypatch) == \
        _outcome(text, prescan=True, monkeypatch=monkeypatch)


def test_a_parser_error_after_the_root_comes_before_the_values_build_error(monkeypatch):
    # a flow root ends before the text does: the parser's error after it is found after the document's node is
    # composed, so without the prescan it must still come before the over-long value is built
    items = ", ".join(f"{{index: {i}, name: L40S}}" for i in range(5_000))
    text = "{gpus: [" + items + ", " + "x" * (Y.MAX_SCALAR_CHARS + 1) + "]}\nb: 2\n"
    assert Y.node_bound(text) > Y.COUNT_ABOVE and Y._within_limits_uncounted(text, Y.MAX_ITEMS)
    for prescan in (True, False):
        assert _outcome(text, prescan=prescan, monkeypatch=monkeypatch)[1:] == (
            "did not find expected <document start>", 2, 1)
