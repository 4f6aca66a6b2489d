"""YAML documents with the line and column of every key and value.

PyYAML (with libyaml when present) composes the node graph; we build plain Python values from it and
remember where each path came from, so every later finding can name file:line:column.

Anyone can put a YAML file in a pull request that gsg checks in CI, so loading is bounded (`limits` below): a
document that would expand, nest or repeat beyond them is refused with YamlInputLimit (GSG017) at its line,
before the large object exists, in well under a second. Every YAML file gsg reads (specs, fleet snapshots,
workloads, contexts, project files, rendered templates) goes through yaml_documents.load_documents, which reads
the common shape of a spec with yaml_fast and everything else with load_composed here.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpustack_guard.core.dataclass_repr import fields_repr

if TYPE_CHECKING:
    import yaml

# PyYAML and what is built on it, made by _pyyaml() on first use: the first text yaml_fast declines, or the first
# number or date it leaves to the constructor. A run whose files all take the fast path (nearly every spec tree)
# never imports PyYAML (~124 M instructions, ~7 % of `gsg validate` on 1,000 specs: yaml_plain). Each one is made
# only where still None, so a test may put its own loader in first.
_Loader: Any = None  # libyaml's CSafeLoader where PyYAML has it (several times faster), else SafeLoader
_TagMemoLoader: Any = None
_RESOLVER: Any = None  # SafeLoader's implicit resolvers (the C and pure-Python loaders share them)
_constructor: Any = None
_SCALAR_CONSTRUCTORS: dict[str, Any] = {}
_EVENT_KINDS: dict[type, int] = {}


def _pyyaml() -> None:
    """Import PyYAML and build the loaders, the resolver, the constructor and the event table, once."""
    global yaml, _Loader, _TagMemoLoader, _RESOLVER, _constructor
    if _EVENT_KINDS:
        return
    import yaml

    if _Loader is None:
        _Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    if _TagMemoLoader is None:
        _TagMemoLoader = type("_TagMemoLoader", (_Loader,), dict(_TAG_MEMO_LOADER))
    _RESOLVER = yaml.resolver.Resolver()
    _constructor = yaml.constructor.SafeConstructor()
    _SCALAR_CONSTRUCTORS.update({tag: yaml.constructor.SafeConstructor.yaml_constructors[tag] for tag in (
        _INT, _FLOAT, "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null", _TIMESTAMP)})
    _EVENT_KINDS.update({
        yaml.ScalarEvent: _SCALAR, yaml.MappingStartEvent: _START, yaml.SequenceStartEvent: _START,
        yaml.MappingEndEvent: _END, yaml.SequenceEndEvent: _END, yaml.AliasEvent: _ALIAS,
        yaml.DocumentStartEvent: _DOCUMENT, yaml.DocumentEndEvent: _OTHER, yaml.StreamStartEvent: _OTHER,
        yaml.StreamEndEvent: _OTHER})


@functools.lru_cache(maxsize=8192)  # bounded; the strings it holds are the composed nodes' own
def _resolve(kind: type, value: str | None, implicit: Any) -> str:
    _pyyaml()
    return _RESOLVER.resolve(kind, value, implicit)


_NOTHING: dict[Any, Any] = {}
# _TagMemoLoader: the loader with its implicit-tag lookup memoised. SafeLoader's resolve() is a pure function of
# (node kind, text, implicit): a few regular expressions picked by the first character, no path resolvers. A spec
# tree repeats the same keys and values in every file; the scale benchmark (1,000 specs, 33,000 calls, ~1,500
# distinct) composes in ~46 ms instead of ~59 (a C-level cache: no Python frame per scalar).
# Path resolvers (add_path_resolver) are none: descending into and out of each node tracks nothing, so the
# composer's two calls per node go to builtins that do nothing instead of Python methods (the scale benchmark:
# 66,000 calls; test_yaml_scalars.py checks every implicit tag against yaml.safe_load).
_TAG_MEMO_LOADER = {
    "resolve": staticmethod(_resolve),
    "descend_resolver": staticmethod(_NOTHING.get),  # (parent, index) -> ignored
    "ascend_resolver": staticmethod(tuple),  # () -> ignored
}


Path = tuple  # tuple[str | int, ...]


# Limits. Real specs are a few dozen lines with at most a handful of anchors; each bound is far above that and
# far below what costs noticeable time or memory.
MAX_ALIAS_EXPANSION = 10_000  # nodes reached through aliases per file (a shared `&defaults` mapping of 30 keys
#                               used by 100 specs is 3,000); the "billion laughs" document reaches 10^9 from 1 KB
MAX_DEPTH = 64  # nested mappings/sequences: a spec nests 4 deep (guard.vars.x, gpu_selector.gpu_ids); deeper
#                 is no spec, and building values recurses once per level (Python's stack is ~1,000 frames)
MAX_DOCUMENTS = 100_000  # documents (`---`) per file: `gsg export` writes a cluster's models into one file, and
#                         clusters keep tens of thousands of parked (replicas: 0) models; each costs ~0.2 ms
MAX_SCALAR_CHARS = 65_536  # one value; the longest real ones are chat templates (a few KB)
MAX_NUMBER_CHARS = 1_000  # one int/float: at most ~1,200 decimal digits, so it still prints (Python refuses to
#                           print an int of over 4,300 digits) and YAML's base-60 ints cost no quadratic time
MAX_ITEMS = 100_000  # items of one list or keys of one mapping in a settings file: a fleet snapshot's longest list
#                      (one cluster's workers or instances) holds a 100,000-GPU fleet
MAX_SPEC_ITEMS = 4_096  # the same in a spec file (spec_loader passes it): a spec's longest lists (gpu_ids,
#                         backend_parameters, env) hold dozens; 1,000,000 flags took 80 s and 2.3 GB
MAX_NODES = 1_500_000  # values, lists and mappings of one file, counted before they are built (~400 bytes each
#                        once composed): 50,000 parked specs or a 100,000-GPU fleet are ~1,000,000
COUNT_ABOVE = 50_000  # files whose node_bound() is above this are counted on events before composing (the two
#                       caps above hold before a node is built); a spec file's bound is a few hundred


class YamlSyntaxError(Exception):
    def __init__(self, message: str, line: int, column: int):
        self.line, self.column = line, column
        super().__init__(message)


class YamlInputLimit(YamlSyntaxError):
    """The input exceeds one of the limits above (GSG017 for a spec file; a settings file's error says the same)."""


@dataclass(eq=False, repr=False)  # identity equality: cheaper to define, never compared or hashed
class LocatedDocument:
    """One YAML document: its data plus the node tree, which answers 1-based (line, column) of any path.

    Positions are looked up on demand (only findings need them), so loading costs little more than parsing.
    """

    __repr__ = fields_repr

    data: Any
    start_line: int
    root: Any = None  # the composed yaml.Node
    duplicate_keys: list[tuple[Path, int, int]] = field(default_factory=list)
    # unquoted numbers YAML 1.1 reads otherwise than YAML 1.2 (base 60, a leading zero's base 8): path, the text
    # and the value read (position() gives the place); a spec check refuses them (editors' YAML 1.2 reads another)
    yaml11_numbers: list[tuple[Path, str, Any]] = field(default_factory=list)
    # keys YAML read as a boolean, number, null or date (`yes:`, `1:`, `~:`): the mapping's path, the key and its
    # text as written (position(key=True) gives the place); a settings file refuses them where no number belongs
    # (spec_loader.refuse_non_text_keys)
    non_text_keys: list[tuple[Path, Any, str]] = field(default_factory=list)
    _by_key: dict[int, dict] = field(default_factory=dict, repr=False, compare=False)
    # yaml_fast.FastLayout of a document read without nodes: it answers position() and plain_text() instead
    layout: Any = field(default=None, repr=False, compare=False)

    def position(self, path: Path, *, key: bool = False) -> tuple[int, int]:
        """Where `path` is, or its nearest ancestor that exists (a missing field points at its parent)."""
        if self.layout is not None:
            return self.layout.position(path, key=key)
        node = self.root
        if node is None:
            return self.start_line, 1
        for depth, part in enumerate(path):
            if isinstance(node, yaml.MappingNode):
                match = self._pairs(node).get(part)
                if match is None:
                    break
                node = match[0] if (key and depth == len(path) - 1) else match[1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
                node = node.value[part]
            else:
                break
        return _mark(node)

    def plain_text(self, path: Path, *, key: bool = False) -> str | None:
        """The unquoted text written at `path` (its key with `key`) when it is a plain scalar (what YAML read as a
        bool, number or null), else None."""
        if self.layout is not None:
            return self.layout.plain_text(path, key=key)
        node = self.root
        for depth, part in enumerate(path):
            if isinstance(node, yaml.MappingNode) and (match := self._pairs(node).get(part)) is not None:
                node = match[0] if key and depth == len(path) - 1 else match[1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
                node = node.value[part]
            else:
                return None
        plain = isinstance(node, yaml.ScalarNode) and not node.style  # libyaml's plain style is "", PyYAML's None
        return node.value if plain and node.value else None

    def _pairs(self, node: yaml.MappingNode) -> dict:
        """A mapping node's pairs by key, built once per node: a lookup per finding costs the same with 10 keys
        or 100,000 (scanning the pairs per lookup was quadratic: 100,000 unused guard.vars took minutes)."""
        pairs = self._by_key.get(id(node))
        if pairs is None:
            pairs = {}
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    key = key_node.value if key_node.tag == _STR else _scalar(key_node)
                    try:
                        pairs[key] = (key_node, value_node)  # the last duplicate wins, as in the data
                    except TypeError:  # pragma: no cover - every scalar key the loader builds is hashable
                        continue
            self._by_key[id(node)] = pairs
        return pairs


_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_VALUE = "tag:yaml.org,2002:value"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_TAG_PREFIX = "tag:yaml.org,2002:"
# The only tags a gsg file may carry, written or implied: YAML's core scalars and plain lists and mappings. The
# others build values no gsg file holds (!!binary bytes, !!set, !!omap, !!python/... objects) or are silently
# read as something else (a custom `!tag` on a mapping is a plain mapping to the loader), so they are refused.
_PLAIN = (True, False)  # `implicit` of an unquoted scalar: what its text resolves to with no tag written


def _scalar(node: yaml.ScalarNode) -> Any:
    if node.tag == _STR:  # most values: skip the constructor's generic dispatch
        return node.value
    simple = _SCALAR_CONSTRUCTORS.get(node.tag)  # ints, floats, ...: the constructor itself, without
    if simple is None:  # construct_object's bookkeeping (it keeps every node it built)
        raise _unsupported_tag(node)
    # An explicit tag on text of another kind (`!!bool maybe`, `!!null x`, `!!timestamp soon`) would crash the
    # constructor or be read as something else: the text must be what the tag says (an int is a valid float).
    implied = _resolve(yaml.ScalarNode, node.value, _PLAIN)
    if implied != node.tag and not (node.tag == _FLOAT and implied == _INT):
        raise YamlSyntaxError(f"{_shown(node.value)} is not a valid {_kind(node.tag)}", *_mark(node))
    if len(node.value) > MAX_NUMBER_CHARS and node.tag in (_INT, _FLOAT):
        raise YamlInputLimit(f"a number of {len(node.value):,} characters (limit {MAX_NUMBER_CHARS:,})", *_mark(node))
    text = node.value
    try:
        if node.tag == _INT and text.isascii() and text.isdigit() and (text[0] != "0" or len(text) == 1):
            # a plain decimal (replicas: 1, max_num_seqs: 16) is what the constructor makes of it, without its
            # underscore, sign, base-8/16/2 and base-60 steps (10,000 specs: 18,000 ints, ~1.2 -> ~0.2 us each);
            # inside the try: int() refuses what the constructor refuses (over 4,300 digits) with the same error
            return int(text)
        return simple(_constructor, node)
    except (ValueError, TypeError, OverflowError) as exc:  # 2001-13-45, an int of 5,000 digits, ...
        reason = str(exc).split(";")[0]
        raise YamlSyntaxError(f"invalid {_kind(node.tag)} {_shown(node.value)}: {reason}", *_mark(node)) from None


def plain_scalar(tag: str, text: str) -> Any:
    """What the full path builds of the unquoted scalar `text` resolved to `tag` (the rarer numbers and dates
    yaml_fast leaves to the constructor); YamlSyntaxError where the full path refuses it."""
    _pyyaml()
    mark = yaml.Mark("", 0, 0, 0, None, None)  # its errors need one; yaml_fast only declines on them
    return _scalar(yaml.ScalarNode(tag, text, mark, mark))


_LEADING_ZERO = re.compile(r"[-+]?0[0-7_]*[0-7]")


def _yaml11_only(text: str, value: Any) -> bool:
    """A number YAML 1.2 reads otherwise: base 60 (`1:30` is 90, a string to YAML 1.2) or a leading zero that
    makes base 8 (`010` is 8, 10 to YAML 1.2). Underscores, 0x and 0b keep their obvious value and pass."""
    if ":" in text:
        return True
    return text[0] in "0+-" and _LEADING_ZERO.fullmatch(text) is not None and value != int(text.replace("_", ""))


def _kind(tag: str) -> str:
    return tag[len(_TAG_PREFIX):] if tag.startswith(_TAG_PREFIX) else tag


def _unsupported_tag(node: yaml.Node) -> YamlSyntaxError:
    if node.tag in (_MERGE, _VALUE):  # `<<` or `=` where a value goes
        return YamlSyntaxError(f"{_shown(node.value)} is a merge key, not a value: quote it", *_mark(node))
    tag = node.tag
    shown = "!!" + tag[len(_TAG_PREFIX):] if tag.startswith(_TAG_PREFIX) else tag
    return YamlSyntaxError(f"YAML tag {_shown(shown)} is not supported: gsg files hold plain strings, numbers, "
                           "true/false, null, lists and mappings (remove the tag, or quote the value)", *_mark(node))


def _shown(value: str) -> str:
    return repr(value if len(value) <= 40 else value[:40] + "...")


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


class _Build:
    """Plain values from one document's node graph, within MAX_DEPTH; merges (<<) are flattened like PyYAML's
    flatten_mapping, remembering which pairs came from a merge: a key that overrides a merged one is plain YAML,
    two own keys of one name are a duplicate."""

    def __init__(self, doc: LocatedDocument, max_items: int, aliases: bool = True, text: str = ""):
        self.doc = doc
        self.text = text  # the file's text: a list or mapping written as a key is quoted from it
        self.max_items = max_items
        # Without an alias (no '*' in the text) no node is reached twice, so no recursion to watch for: the set
        # of nodes being built is skipped (10,000 specs: ~180,000 set operations, ~40 ms)
        self.aliases = aliases
        self.active: set[int] = set()
        self.merged: dict[int, int] = {}  # id(mapping node) -> how many leading pairs came from merges

    def value(self, node: yaml.Node, path: Path) -> Any:
        if isinstance(node, yaml.ScalarNode):
            if len(node.value) > MAX_SCALAR_CHARS:
                raise YamlInputLimit(f"a value of {len(node.value):,} characters (limit {MAX_SCALAR_CHARS:,})",
                                     *_mark(node))
            value = _scalar(node)
            if (node.tag == _INT or node.tag == _FLOAT) and _yaml11_only(node.value, value):
                self.doc.yaml11_numbers.append((path, node.value, value))
            return value
        if len(path) >= MAX_DEPTH:
            raise YamlInputLimit(f"nested more than {MAX_DEPTH} levels deep", *_mark(node))
        if self.aliases and id(node) in self.active:
            raise YamlSyntaxError("recursive alias", *_mark(node))
        if node.tag != (_SEQ if isinstance(node, yaml.SequenceNode) else _MAP):
            raise _unsupported_tag(node)
        if len(node.value) > self.max_items:
            raise _too_many(node, len(node.value), self.max_items)
        if not self.aliases:
            return self.collection(node, path)
        self.active.add(id(node))
        try:
            return self.collection(node, path)
        finally:
            self.active.discard(id(node))

    def collection(self, node: yaml.Node, path: Path) -> Any:
        if isinstance(node, yaml.SequenceNode):  # plain strings inline, as in mapping()
            return [child.value if type(child) is yaml.ScalarNode and child.tag == _STR
                    and len(child.value) <= MAX_SCALAR_CHARS else self.value(child, path + (i,))
                    for i, child in enumerate(node.value)]
        if isinstance(node, yaml.MappingNode):
            return self.mapping(node, path)
        raise YamlSyntaxError(f"unsupported YAML node {type(node).__name__}", *_mark(node))  # pragma: no cover

    def mapping(self, node: yaml.MappingNode, path: Path) -> dict:
        merged = self.merged.get(id(node), 0)
        result: dict = {}
        own: set = set()
        for index, (key_node, value_node) in enumerate(node.value):
            if key_node.tag == _MERGE or key_node.tag == _VALUE:  # once per mapping: flatten, then start again
                self.flatten(node)
                return self.mapping(node, path)
            if not isinstance(key_node, yaml.ScalarNode):
                raise _collection_key(key_node, path, self.text)
            if key_node.tag == _STR:
                key = key_node.value
            else:
                key = _scalar(key_node)
                if not isinstance(key, str):
                    self.doc.non_text_keys.append((path, key, key_node.value))
            if index >= merged:
                if key in own:
                    self.doc.duplicate_keys.append((path + (key,), *_mark(key_node)))
                own.add(key)
            # A plain string value is built here, without value()'s call and path (most values of a spec; the
            # scale benchmark's 1,000 specs: ~10 ms of ~55 ms loading). Anything else goes through value().
            if type(value_node) is yaml.ScalarNode and value_node.tag == _STR and \
                    len(value_node.value) <= MAX_SCALAR_CHARS:
                result[key] = value_node.value
            else:
                result[key] = self.value(value_node, path + (key,))
        return result

    def flatten(self, node: yaml.MappingNode) -> None:
        """Merged pairs first (an earlier mapping of `<<: [*a, *b]` wins), the mapping's own after them (they win):
        node.value is rewritten once, so positions find the pair whose value the data holds (the last). How many
        pairs came from merges is kept for the duplicate-key check (an aliased node is built again)."""
        merge: list = []
        own: list = []
        for key_node, value_node in node.value:
            if key_node.tag != _MERGE:
                if key_node.tag == _VALUE:
                    key_node.tag = _STR
                own.append((key_node, value_node))
                continue
            sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            parts = []
            for source in sources:
                if isinstance(source, yaml.MappingNode) and source.tag != _MAP:
                    raise _unsupported_tag(source)
                if not isinstance(source, yaml.MappingNode):
                    raise YamlSyntaxError("`<<` merges a mapping or a list of mappings (an alias such as *defaults)",
                                          *_mark(source))
                if id(source) in self.active:
                    raise YamlSyntaxError("recursive alias", *_mark(source))
                if any(k.tag == _MERGE or k.tag == _VALUE for k, _ in source.value):
                    self.active.add(id(source))
                    try:
                        self.flatten(source)
                    finally:
                        self.active.discard(id(source))
                parts.append(source.value)
            for part in reversed(parts):  # later pairs win when building: the first listed mapping goes last
                merge.extend(part)
        node.value = merge + own
        self.merged[id(node)] = len(merge)


def _collection_key(node: yaml.Node, path: Path, text: str) -> YamlSyntaxError:
    """A list or mapping as a key (`? [a]`, `[a]: 1`, `{a: 1}: 2`): no gsg file has one, and Python cannot hold it
    as a key. Named with its parent and, written on one line, its text."""
    kind = "a list" if isinstance(node, yaml.SequenceNode) else "a mapping"
    start, end = node.start_mark, node.end_mark
    lines = text.splitlines() if start.line == end.line else []
    written = lines[start.line][start.column:end.column] if start.line < len(lines) else ""
    shown = f" (written {_shown(written)})" if written else ""
    where = ".".join(map(str, path)) or "the document"
    if path and isinstance(path[0], int):  # as core/spec/check.key_reading: `item 0` of a list document
        where = f"item {where}"
    return YamlSyntaxError(f"a key of {_shown(where)[1:-1]} is {kind}{shown}, not a field name: YAML reads `? [..]` "
                           "and `[..]:` as a list, `{..}:` as a mapping (quote the key, or correct it)", *_mark(node))


def _too_many(node: Any, count: int, limit: int) -> YamlInputLimit:
    what = "list of" if isinstance(node, (yaml.SequenceNode, yaml.SequenceStartEvent)) else "mapping of"
    unit = "items" if what == "list of" else "keys"
    return YamlInputLimit(f"a {what} {count:,} {unit} or more (limit {limit:,}): not a file gsg reads",
                          node.start_mark.line + 1, node.start_mark.column + 1)


def node_bound(text: str) -> int:
    """An upper bound on the nodes (values, lists, mappings) the text can compose to, from C-speed counts of
    the characters that start one: every node but a document's root follows a '-', ':', ',', '?', '[' or '{'
    (a ':' or ',' starts at most a key and its value, a bracket at most a collection and its first pair).
    Only a file whose bound passes COUNT_ABOVE is counted exactly (_prescan)."""
    return (3 * (text.count(":") + text.count("[") + text.count("{") + text.count("?"))
            + 2 * (text.count("-") + text.count(",")) + 2)


# What _prescan does with each kind of parser event, looked up by the event's exact class: a dictionary lookup
# and `is` tests instead of up to seven isinstance calls per event (a 5,000-GPU fleet is 70,000 events;
# _prescan's own time ~26 -> ~14 ms, benchmarks/scale.py at 10,000 x 5,000, docs/performance.md eighth round).
_SCALAR, _START, _END, _ALIAS, _DOCUMENT, _OTHER = range(6)
# (_EVENT_KINDS itself is filled by _pyyaml)


def _event_kind(event: yaml.Event) -> int:
    """The kind of an event of a class not in _EVENT_KINDS (a subclass): by isinstance, as the table would."""
    for cls, kind in _EVENT_KINDS.items():
        if isinstance(event, cls):
            return kind
    return _OTHER


def _prescan(text: str, *, aliases: bool, nodes: bool = False, max_items: int = MAX_ITEMS) -> None:
    """One pass over the parser's events, building nothing, that refuses a file with more than MAX_DOCUMENTS
    documents, (with `aliases`) whose aliases reach more than MAX_ALIAS_EXPANSION nodes, or (with `nodes`) with
    more than MAX_NODES nodes or a collection of more than `max_items`, at the event that passes the limit.
    Nothing is expanded: each alias adds the size of its anchor's node (the aliases inside it counted
    expanded)."""
    _pyyaml()
    unbounded = float("inf")  # the limits `nodes` leaves unchecked; the document's root has no item limit
    node_limit = MAX_NODES if nodes else unbounded
    sizes: dict[str, int] = {}
    # anchor, size, direct children, start event, the most direct children it may have (a mapping's are
    # counted per key and per value: twice its items)
    stack: list[list] = [[None, 0, 0, None, unbounded]]
    expanded = documents = composed = 0
    every = aliases or nodes
    for event in yaml.parse(text, Loader=_Loader):
        kind = _EVENT_KINDS.get(type(event))
        if kind is None:
            kind = _event_kind(event)
        if kind is _DOCUMENT:
            documents += 1
            if documents > MAX_DOCUMENTS:
                raise YamlInputLimit(f"more than {MAX_DOCUMENTS:,} documents in one file: split it",
                                     event.start_mark.line + 1, event.start_mark.column + 1)
            continue
        if not every or kind is _OTHER:
            continue
        if kind is _END:
            anchor, size, _, _, _ = stack.pop()
            stack[-1][1] += size
            if anchor:
                sizes[anchor] = size
            continue
        parent = stack[-1]
        parent[2] += 1
        composed += 1
        if composed > node_limit:
            raise YamlInputLimit(f"more than {MAX_NODES:,} values, lists and mappings in one file: split it",
                                 event.start_mark.line + 1, event.start_mark.column + 1)
        if parent[2] > parent[4]:
            raise _too_many(parent[3], max_items + 1, max_items)
        if kind is _SCALAR:
            parent[1] += 1
            if event.anchor:
                sizes[event.anchor] = 1
        elif kind is _ALIAS:
            size = sizes.get(event.anchor, 1)
            expanded += size
            parent[1] += size
            if expanded > MAX_ALIAS_EXPANSION:
                raise YamlInputLimit(f"aliases expand to more than {MAX_ALIAS_EXPANSION:,} nodes ({expanded:,} up "
                                     "to this one): not a spec, possibly a 'billion laughs' document",
                                     event.start_mark.line + 1, event.start_mark.column + 1)
        else:  # a sequence or mapping starts
            most = (max_items * (2 if isinstance(event, yaml.MappingStartEvent) else 1)) if nodes else unbounded
            stack.append([event.anchor, 1, 0, event, most])


def scalar_spans(text: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Where the text of each quoted and block scalar lies (core/suppressions.ScalarSpan): a `#` there is part of
    a value, not a comment. A block scalar's text starts on the line after its `|` or `>` (a comment may follow
    the indicator). Up to a syntax error, the scalars before it (that file is reported as not YAML anyway)."""
    _pyyaml()
    spans = []
    try:
        for token in yaml.scan(text, Loader=_Loader):
            if isinstance(token, yaml.ScalarToken) and not token.plain:
                start, end = token.start_mark, token.end_mark
                begin = (start.line + 1, 0) if token.style in ("|", ">") else (start.line, start.column)
                spans.append((begin, (end.line, end.column)))
    except yaml.YAMLError:
        pass
    return spans


def _located(text: str, mark) -> tuple[int, int]:
    return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)


_UNCLOSED = {"while parsing a flow sequence": "'['", "while parsing a flow mapping": "'{'",
             "while scanning a quoted scalar": "quote"}


_MAX_SIMPLE_KEY = 1024  # YAML 1.1/1.2: an implicit key is at most 1,024 characters (PyYAML and libyaml alike)


def _syntax_error(text: str, exc: yaml.MarkedYAMLError) -> YamlSyntaxError:
    """The line of the cause: an unclosed bracket or quote is reported where it opens (the parser notices it
    lines later), a tab in the indentation by name, anything else where the parser stopped."""
    problem = exc.problem or exc.context or "invalid YAML"
    line, column = _located(text, exc.problem_mark or exc.context_mark)
    lines = text.split("\n")
    here = lines[line - 1] if 0 < line <= len(lines) else ""
    if "\t" in here[:column] and not here[:column].replace("\t", "").strip(" "):
        return YamlSyntaxError("tab character in indentation (YAML indents with spaces only)",
                               line, here.index("\t") + 1)
    opener = _UNCLOSED.get(exc.context or "")
    if opener and exc.context_mark is not None and exc.context_mark.line < line - 1:
        start_line, start_column = _located(text, exc.context_mark)
        return YamlSyntaxError(f"{opener} opened here is not closed ({problem} at line {line}, column {column})",
                               start_line, start_column)
    if exc.context and exc.context.startswith("found duplicate anchor") and exc.context_mark is not None:
        first_line, _ = _located(text, exc.context_mark)
        return YamlSyntaxError(f"duplicate anchor (first defined at line {first_line})", line, column)
    if exc.context == "while scanning a simple key" and exc.context_mark is not None and \
            exc.problem_mark is not None and exc.problem_mark.line == exc.context_mark.line and \
            exc.problem_mark.column - exc.context_mark.column > _MAX_SIMPLE_KEY:
        # YAML ends an implicit key at 1,024 characters: the parser's "could not find expected ':'" sits past it
        start_line, start_column = _located(text, exc.context_mark)
        return YamlInputLimit(f"a key of more than {_MAX_SIMPLE_KEY:,} characters (YAML's limit for a key)",
                              start_line, start_column)
    if problem.startswith("found undefined alias"):
        return YamlSyntaxError(f"undefined alias {_word_at(here, column)} (no anchor of that name above it)",
                               line, column)
    if problem.startswith("mapping values are not allowed"):
        return YamlSyntaxError(f"{problem}: quote a value that holds ': ', or indent the key under its parent",
                               line, column)
    return YamlSyntaxError(problem, line, column)


def _word_at(line: str, column: int) -> str:
    rest = line[column - 1:]
    end = next((i for i, c in enumerate(rest) if i and (c.isspace() or c in ",]}")), len(rest))
    return repr(rest[:end])


def _reader_error(text: str, exc: yaml.reader.ReaderError) -> YamlSyntaxError:
    """A character YAML does not allow (NUL, other control characters), at its own line:column: libyaml counts
    its position in UTF-8 bytes, the pure-Python reader in characters, so the character is looked up instead."""
    if isinstance(exc.character, int):
        index = text.find(chr(exc.character))
        index = index if index >= 0 else min(exc.position, len(text))
        line = text.count("\n", 0, index) + 1
        column = index - (text.rfind("\n", 0, index) + 1) + 1
        return YamlSyntaxError(f"character U+{exc.character:04X} is not allowed in YAML ({exc.reason}); "
                               "remove it or write it as an escape in a double-quoted string", line, column)
    return YamlSyntaxError(str(exc).splitlines()[0], 1, 1)  # pragma: no cover - str input is decoded already


def _within_limits_uncounted(text: str, max_items: int) -> bool:
    """Whether the prescan of a large text is sure to pass, from C-speed counts: one document (no '---', no '...':
    a later document needs its own '---', and after '...' the parser's error would follow the first document's
    values), no anchor (the composer's own errors are about anchors), at most MAX_NODES nodes (node_bound) and no
    collection of more than `max_items`: each item after a collection's first starts at a '-', ',', ':' or '?'.
    Such a text composes to the same nodes and parser errors without the event pass (a 5,000-GPU fleet: the
    prescan was ~60-80 of the fleet's ~250 ms CPU; docs/performance.md, twelfth round)."""
    if "---" in text or "..." in text or "&" in text or node_bound(text) > MAX_NODES:
        return False
    return text.count("-") + text.count(",") + text.count(":") + text.count("?") < max_items


def load_composed(text: str, *, max_items: int = MAX_ITEMS) -> list[LocatedDocument]:
    """All documents of a YAML stream through PyYAML's composer, whatever the text: load_documents' path for what
    yaml_fast declines, and what yaml_fast's test compares it with. Empty documents are skipped. Raises
    YamlSyntaxError, or YamlInputLimit (a subclass) for input beyond the limits above (`max_items`: per list or
    mapping; MAX_SPEC_ITEMS for specs)."""
    _pyyaml()
    documents: list[LocatedDocument] = []
    try:
        # Before building anything, one pass on events when a limit could be passed: aliases are possible, there
        # could be too many documents (every document after the first starts with its own '---'), or the text
        # could compose to enough nodes to cost seconds (MAX_NODES, or `max_items` in one collection).
        aliases = "*" in text
        nodes = node_bound(text) > COUNT_ABOVE
        composed = yaml.compose_all(text, Loader=_TagMemoLoader)
        if nodes and not aliases and _within_limits_uncounted(text, max_items):
            composed = list(composed)  # every parser error before any value is built, as after the prescan
        elif aliases or nodes or text.count("---") >= MAX_DOCUMENTS:
            _prescan(text, aliases=aliases, nodes=nodes, max_items=max_items)
        for node in composed:
            if node is None or (isinstance(node, yaml.ScalarNode) and node.tag.endswith(":null") and not node.value):
                continue  # an empty document between two '---' lines
            doc = LocatedDocument(data=None, start_line=node.start_mark.line + 1, root=node)
            doc.data = _Build(doc, max_items, aliases, text).value(node, ())
            documents.append(doc)
    except yaml.reader.ReaderError as exc:
        raise _reader_error(text, exc) from None
    except yaml.MarkedYAMLError as exc:
        if "exceeded maximum nesting depth" in (exc.problem or ""):  # libyaml stops at 1,000 levels
            raise YamlInputLimit(f"nested more than {MAX_DEPTH} levels deep", *_located(text, exc.problem_mark)
                                 ) from None
        raise _syntax_error(text, exc) from None
    except yaml.YAMLError as exc:  # pragma: no cover - every parser error is marked or a reader error
        raise YamlSyntaxError(str(exc).splitlines()[0], 1, 1) from None
    except RecursionError:  # pragma: no cover - the pure-Python composer without libyaml, past ~500 levels
        raise YamlInputLimit(f"nested more than {MAX_DEPTH} levels deep", 1, 1) from None
    return documents
