"""A fast path of load_documents for the YAML nearly every spec is written in.

Why: composing PyYAML nodes (libyaml parses in C, but every node and mark is a Python object) and building values
from them was the largest part of loading a spec tree. Most lines of a tree repeat from file to file
(`replicas: 1`, `  - --max-model-len=8192`), so each distinct line is read once into what it holds (indent, key,
value, where the composer would place them) and a file is put together from those. Positions are put together
only when one is first asked (FastLayout), which only a file with a finding does. Measured at 10,000 specs
(benchmarks/scale.py's tree, every file taken): load_documents ~49 -> ~11 us a spec, the 2,250 files asked for
positions ~22 ms (composing them again was ~140); the 5,000-GPU fleet ~91 -> ~13 ms; in-process phases
(medians of 3) load_specs 752 -> 417 ms CPU, load_fleet 127 -> 41 (docs/performance.md, fourteenth round).

Accepts documents (the first, or each after a line that is `---` alone) of: block mappings; block sequences of
`- ` items (flush under their key or indented, mappings as items); plain scalars on one line; '...' and "..."
scalars on one line without '' or a backslash; one-line flow lists and mappings of plain scalars ([a, b],
{rack: r1}); comments and blank lines. Scalars resolve as the full path's resolver and constructor read them (YAML
1.1 implicit types: yaml_plain, and PyYAML only for a rarer number or a date); duplicate keys, YAML 1.1-only
numbers and keys read as no text are listed as there. Anything else (anchors, aliases, tags, `<<`, `...`, `--- x`,
block scalars, continued scalars, escapes, tabs, CR, BOM, control characters, `? ` keys, nested flow, odd
indentation, a file past a limit, a scalar the full path would refuse)
returns None, and load_documents composes the text as before.
tests/adapters/files/test_yaml_fast.py runs both paths on every YAML file of the repository and on the
neighbours of this shape.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from gpustack_guard.adapters.files import yaml_plain, yaml_positions
from gpustack_guard.adapters.files.yaml_positions import (
    _FLOAT,
    _INT,
    LocatedDocument,
    Path,
    YamlSyntaxError,
    _yaml11_only,
    node_bound,
)

_MAX_LINE_CHARS = 60_000  # a longer line could hold a value past MAX_SCALAR_CHARS
_MAX_FAST_DEPTH = 32  # half of MAX_DEPTH
_MAX_KEY_CHARS = 1_000  # below YAML's 1,024-character implicit key (quoted, plain or in a flow mapping alike)
_MAX_LINES_KEPT = 65_536  # distinct lines remembered (a 10,000-spec tree has ~25,000); then forgotten at once
# Only spaces, newlines and printable characters that are no YAML line break (NEL, U+2028/9) and no BOM. The
# class over all of Unicode takes ~7 ms to compile (as much as the rest of this module's import), so it is compiled
# on the first non-ASCII text; an ASCII text (nearly every spec) is checked against the ASCII part alone.
_REFUSED_ASCII = re.compile("[^\n\x20-\x7e]")
_REFUSED_PATTERN = "[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"


@functools.lru_cache(maxsize=1)
def _refused_in_unicode() -> re.Pattern[str]:
    return re.compile(_REFUSED_PATTERN)


def _has_refused_character(text: str) -> bool:
    refused = _REFUSED_ASCII if text.isascii() else _refused_in_unicode()
    return refused.search(text) is not None
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")  # what a plain scalar may not start with (`-x` aside)

# What a line holds: (indent, kind, key, value, fresh, numbers, marks). `fresh` is list or dict for a flow
# collection (the line keeps a tuple; each file gets its own copy), None for a scalar; `numbers` are the YAML
# 1.1-only numbers of the value as (path below the value, text, value read); `marks` is where the composer would
# place the key and value (see _inline), read only when a position is asked (FastLayout).
_KEY_VALUE, _KEY_OPEN, _ITEM_VALUE, _ITEM_KEY = range(4)  # `k: v`, `k:` (value below), `- v`, `- k: ...`
_SKIP = (-1, -1, None, None, None, (), None)  # a blank or comment line
_DOCUMENT_START = (-2, -2, None, None, None, (), None)  # a line that is `---` and nothing else
_LINES: dict[str, tuple] = {}


# In a flow collection's `numbers`, in place of the value read: the entry is a key YAML read as no text (its path,
# written text), which the document lists in non_text_keys
_NON_TEXT_KEY = object()


class _Decline(Exception):
    """Not the common shape: the full path reads the text."""


def fast_documents(text: str, max_items: int) -> list[LocatedDocument] | None:
    """The document of `text` as load_documents would build it, or None when the text is not the common shape."""
    # The limits read at each call, as load_documents reads them. node_bound() is at most 3 a character, so a
    # spec needs no count to stay within MAX_NODES; each document after the first takes a `---\n`.
    if 3 * len(text) + 2 > yaml_positions.MAX_NODES and node_bound(text) > yaml_positions.MAX_NODES:
        return None
    if (len(text) + 1) // 4 + 1 >= yaml_positions.MAX_DOCUMENTS and "---" in text:
        return None
    if yaml_positions.MAX_DEPTH < _MAX_FAST_DEPTH + _MAX_FLOW_DEPTH or \
            yaml_positions.MAX_SCALAR_CHARS < _MAX_LINE_CHARS:
        return None  # a limit lowered below this module's own caps (as a test may): the full path checks it
    if _has_refused_character(text):
        return None
    if text.count("\n") + text.count(",") + 2 > max_items:  # an item needs its own line or comma
        return None
    known = _LINES.get
    try:
        parsed = [known(line) or _read_line(line) for line in text.split("\n")]
    except _Decline:
        return None
    documents = []
    for offset, lines in _split_documents(parsed):
        entries = [entry for entry in lines if entry is not _SKIP]
        if not entries:
            continue  # an empty document (blank, comments only), skipped as load_documents skips it
        doc = LocatedDocument(data=None, start_line=offset + lines.index(entries[0]) + 1,
                              layout=FastLayout(lines, offset))
        build = _Assemble(entries, lines, offset, doc)
        try:
            doc.data = build.block(entries[0][0], ())
        except _Decline:
            return None
        if build.pos != len(entries):  # a line less indented than the root's first
            return None
        documents.append(doc)
    return documents or None


def _split_documents(parsed: list[tuple]) -> list[tuple[int, list[tuple]]]:
    """The lines of each document (a `---` line starts the next) with the number of lines before them."""
    if _DOCUMENT_START not in parsed:
        return [(0, parsed)]
    parts = []
    start = 0
    for index, entry in enumerate(parsed):
        if entry is _DOCUMENT_START:
            parts.append((start, parsed[start:index]))
            start = index + 1
    parts.append((start, parsed[start:]))
    return parts


def _read_line(line: str) -> tuple:
    """What one line holds (kept for the next file that has it), _SKIP for a blank or comment line."""
    if len(line) > _MAX_LINE_CHARS:
        raise _Decline
    if line.startswith(("---", "...")):
        if line == "---":
            return _DOCUMENT_START
        raise _Decline  # a marker with more on its line, a document end, a directive's end
    content = line.lstrip(" ")
    if not content or content[0] == "#":
        return _SKIP
    indent = len(line) - len(content)
    content = content.rstrip(" ")
    entry: tuple
    if _is_item(content):
        rest = content[2:].lstrip(" ")
        if not rest or rest[0] == "#" or _is_item(rest):
            raise _Decline  # the item on the next lines, or a list in a list
        column = indent + len(content) - len(rest)
        if rest[0] not in "[{" and _key_end(rest) is not None:  # `- key: value` starts a mapping
            entry = (indent, _ITEM_KEY, None, _key_line(rest, column), None, (), None)
        else:
            value, fresh, numbers, value_marks = _inline(rest, column)
            entry = (indent, _ITEM_VALUE, None, value, fresh, numbers, (None, value_marks))
    else:
        entry = _key_line(content, indent)
    if len(_LINES) >= _MAX_LINES_KEPT:
        _LINES.clear()
    _LINES[line] = entry
    return entry


def _key_line(content: str, column: int) -> tuple:
    end = _key_end(content)
    if end is None:
        raise _Decline  # a scalar on its own line: a document that is one value, or a continued scalar
    key_text = content[:end]
    key = _key(key_text)
    key_plain = None if key_text[0] in "'\"" else key_text
    rest = content[end + 1:].lstrip(" ")
    if rest and rest[0] != "#":
        value, fresh, numbers, value_marks = _inline(rest, column + len(content) - len(rest))
        return (column, _KEY_VALUE, key, value, fresh, numbers, (key_plain, value_marks))
    # the composer puts an empty value just after the `:`
    return (column, _KEY_OPEN, key, None, None, (), (key_plain, ("v", column + end + 2, None)))


def _key(text: str) -> Any:
    if not text or len(text) > _MAX_KEY_CHARS:
        raise _Decline  # `: value`, an empty key, or one near YAML's 1,024 characters (quotes count)
    if text[0] in "'\"":
        body, end = _quoted(text)
        if end != len(text):
            raise _Decline
        return body
    if text.endswith(" ") or "#" in text or not _plain_start_ok(text, False):
        raise _Decline
    return _plain_value(text)[0]  # a key's number is not checked for YAML 1.1 (the full path's mapping())


def _inline(rest: str, column: int) -> tuple[Any, Any, tuple, tuple]:
    """A value written on its key's or dash's line (at 0-based `column`): (value, fresh, YAML 1.1-only numbers,
    marks). Marks are what FastLayout makes nodes of, without the line: ("v", 1-based column, plain text or
    None), ("s", column, [item marks]) or ("m", column, {key: (key column, key's plain text, value marks)})."""
    first = rest[0]
    if first in "'\"":
        body, end = _quoted(rest)
        _only_comment(rest[end:])
        return body, None, (), ("v", column + 1, None)
    if first == "[" or first == "{":
        return _Flow(rest, column).read()
    cut = rest.find(" #")
    text = (rest if cut < 0 else rest[:cut]).rstrip(" ")
    if not _plain_start_ok(text, False) or not _plain_body_ok(text):
        raise _Decline
    value, numbers = _plain(text, ())
    return value, None, numbers, ("v", column + 1, text)


def _plain(text: str, below: Path) -> tuple[Any, tuple]:
    value, tag = _plain_value(text)
    if tag in (_INT, _FLOAT) and _yaml11_only(text, value):
        return value, ((below, text, value),)
    return value, ()


class _FrozenMap(tuple):
    """A flow mapping's pairs as a line keeps them (each use thaws its own dict)."""


def _thaw(value: Any) -> Any:
    """A fresh copy of a kept flow value: lists from tuples, dicts from _FrozenMap, scalars as they are."""
    if type(value) is _FrozenMap:
        return {key: _thaw(item) for key, item in value}
    if type(value) is tuple:
        return [_thaw(item) for item in value]
    return value


# What ends a plain scalar in a flow collection, or makes us decline: quotes, and `?`, which PyYAML's pure-Python
# scanner (the full path without libyaml) takes as a key indicator inside a flow scalar where libyaml does not
_FLOW_STOP = re.compile(r"[,\[\]{}#'\"?]")
_MAX_FLOW_DEPTH = 8  # collections inside one another on one line


class _Flow:
    """A flow collection that opens and closes on its line, plain scalars only, nested up to _MAX_FLOW_DEPTH."""

    def __init__(self, rest: str, column: int):
        self.text = rest
        self.base = column + 1  # 1-based column of rest[0]
        self.pos = 0
        self.numbers: list = []  # a list: adding to a tuple was quadratic (11,000 `010` on a line: 0.40 -> 0.10 s)
        self.nested = False

    def read(self) -> tuple[Any, Any, tuple, tuple]:
        value, marks = self.collection((), 0)
        _only_comment(self.text[self.pos:])
        numbers = tuple(self.numbers)
        if self.nested:
            return value, _thaw, numbers, marks
        return value, (list if marks[0] == "s" else dict), numbers, marks

    def collection(self, below: Path, depth: int) -> tuple[Any, tuple]:
        if depth >= _MAX_FLOW_DEPTH:
            raise _Decline
        text = self.text
        start = self.pos
        closer = "]" if text[start] == "[" else "}"
        self.pos += 1
        self.spaces()
        values: list = []
        children: Any = [] if closer == "]" else {}
        if text[self.pos:self.pos + 1] == closer:
            self.pos += 1
        else:
            while True:
                if closer == "]":
                    value, marks = self.value(below + (len(values),), depth)
                    values.append(value)
                    children.append(marks)
                else:
                    self.pair(below, depth, values, children)
                self.spaces()
                stop = text[self.pos:self.pos + 1]
                self.pos += 1
                if stop == closer:
                    break
                if stop != ",":
                    raise _Decline  # unclosed on this line, or something after a value
                self.spaces()
                if text[self.pos:self.pos + 1] == closer:
                    raise _Decline  # a trailing comma
        if closer == "]":
            return tuple(values), ("s", self.base + start, children)
        return _FrozenMap(values), ("m", self.base + start, children)

    def pair(self, below: Path, depth: int, values: list, children: dict) -> None:
        at = self.pos
        stop = _FLOW_STOP.search(self.text, at)
        if stop is None:
            raise _Decline
        key_text, separator, _ = self.text[at:stop.start()].partition(": ")
        if not separator or ":" in key_text or len(key_text) > _MAX_KEY_CHARS:
            raise _Decline  # no pair, or a key near YAML's 1,024 characters (libyaml's error in a flow too)
        key_plain = _flow_plain(key_text)
        key = _plain_value(key_plain)[0]
        if key in children:
            raise _Decline  # the full path reports it with its column
        if type(key) is not str:  # `{3: 8GiB}` (a claim), `{yes: 1}`: listed with the numbers (_NON_TEXT_KEY)
            self.numbers.append((below + (key,), key_plain, _NON_TEXT_KEY))
        self.pos = at + len(key_text) + 2
        self.spaces()
        value, marks = self.value(below + (key,), depth)
        values.append((key, value))
        children[key] = (self.base + at, key_text, marks)

    def value(self, below: Path, depth: int) -> tuple[Any, tuple]:
        text = self.text
        if text[self.pos:self.pos + 1] in ("[", "{"):
            self.nested = True
            return self.collection(below, depth + 1)
        at = self.pos
        stop = _FLOW_STOP.search(text, at)
        if stop is None or text[stop.start()] not in ",]}":
            raise _Decline  # unclosed, or a bracket, comment or quote inside a plain scalar
        item = _flow_plain(text[at:stop.start()].rstrip(" "))
        self.pos = at + len(item)
        value, found = _plain(item, below)
        self.numbers.extend(found)
        return value, ("v", self.base + at, item)

    def spaces(self) -> None:
        text = self.text
        while text[self.pos:self.pos + 1] == " ":
            self.pos += 1


def _is_item(content: str) -> bool:
    return content.startswith("- ") or content == "-"


def _plain_start_ok(text: str, flow: bool) -> bool:
    if not text or text[0] not in _INDICATORS:
        return bool(text)
    # `-x` starts a plain scalar (--max-model-len=8192, -1); `?x` and `:x` only outside flow collections
    return len(text) > 1 and text[1] != " " and (text[0] == "-" or (text[0] in "?:" and not flow))


def _plain_body_ok(text: str) -> bool:
    """No `: ` (a mapping inside the scalar), no `:` at its end, no ` #` (a comment)."""
    return ": " not in text and not text.endswith(":") and " #" not in text


def _quoted(text: str) -> tuple[str, int]:
    """A one-line quoted scalar at the start of text, without escapes: its value and where it ends."""
    quote = text[0]
    end = text.find(quote, 1)
    if end < 0:
        raise _Decline  # continued on the next line
    body = text[1:end]
    if (quote == "'" and text[end + 1:end + 2] == "'") or (quote == '"' and "\\" in body):
        raise _Decline  # '' or an escape
    return body, end + 1


def _only_comment(tail: str) -> None:
    """What follows a value on its line: nothing, or a comment after a space."""
    if tail and not (tail[0] == " " and tail.lstrip(" ")[:1] in ("", "#")):
        raise _Decline


def _plain_value(text: str) -> tuple[Any, str]:
    """What the full path builds of a plain scalar and its tag: text, decimal numbers, booleans and null here
    without PyYAML (yaml_plain says why), any other number or date by the full path's own constructor."""
    tag = yaml_plain.plain_tag(text)
    value = yaml_plain.plain_value(tag, text, yaml_positions.MAX_NUMBER_CHARS)
    if value is not yaml_plain.NOT_BUILT:
        return value, tag
    try:
        return yaml_positions.plain_scalar(tag, text), tag
    except YamlSyntaxError:  # `<<`, `=`, 2001-13-45, a number past MAX_NUMBER_CHARS: the full path says so
        raise _Decline from None


class _Assemble:
    """A file's values from its lines, in the full path's order (a key before its value, depth first), so
    duplicate keys and YAML 1.1-only numbers are listed in the same order."""

    def __init__(self, entries: list[tuple], parsed: list[tuple], offset: int, doc: LocatedDocument):
        self.entries = entries
        self.parsed = parsed
        self.offset = offset  # lines before the document's own
        self.doc = doc
        self.pos = 0
        self.line_numbers: list[int] | None = None  # of the entries, made on the first duplicate key

    def block(self, indent: int, path: Path) -> Any:
        if len(path) >= _MAX_FAST_DEPTH:
            raise _Decline
        kind = self.entries[self.pos][1]
        if kind in (_ITEM_VALUE, _ITEM_KEY):
            return self.sequence(indent, path)
        return self.mapping(indent, path)

    def mapping(self, indent: int, path: Path) -> dict:
        result: dict = {}
        entries = self.entries
        count = len(entries)
        pos = self.pos
        while pos < count:
            column, kind, key, value, fresh, numbers, _ = entries[pos]
            if column != indent:
                if column < indent:
                    break
                raise _Decline  # deeper than its neighbours, below a value on its key's line
            if key in result:
                self.duplicate(path + (key,), pos, column)
            if type(key) is not str and kind <= _KEY_OPEN:  # `yes:`, `3:` (a claim's GPU index), as mapping() lists
                self.doc.non_text_keys.append((path, key, entries[pos][6][0]))
            pos += 1
            if kind == _KEY_VALUE:
                if pos < count and entries[pos][0] > indent:
                    raise _Decline  # the value continues on the next line
                result[key] = value if fresh is None else fresh(value)
                if numbers:
                    self.yaml11(path + (key,), numbers)
            elif kind == _KEY_OPEN:
                self.pos = pos
                result[key] = self.nested(indent, path + (key,))
                pos = self.pos
            else:
                raise _Decline  # a list item among keys
        self.pos = pos
        return result

    def sequence(self, indent: int, path: Path) -> list:
        items: list = []
        entries = self.entries
        count = len(entries)
        pos = self.pos
        while pos < count:
            column, kind, _, value, fresh, numbers, _ = entries[pos]
            if column != indent:
                if column < indent:
                    break
                raise _Decline
            if kind == _ITEM_VALUE:
                pos += 1
                if pos < count and entries[pos][0] > indent:
                    raise _Decline  # the value continues on the next line
                if numbers:
                    self.yaml11(path + (len(items),), numbers)
                items.append(value if fresh is None else fresh(value))
            elif kind == _ITEM_KEY:
                entries[pos] = value  # the key line after the dash, at its own column (this file's copy)
                self.pos = pos
                item_path = path + (len(items),)
                if len(item_path) >= _MAX_FAST_DEPTH:
                    raise _Decline
                items.append(self.mapping(value[0], item_path))
                pos = self.pos
            else:
                break  # a key: the end of a list flush with its key
        self.pos = pos
        return items

    def nested(self, indent: int, path: Path) -> Any:
        """The value of a key with nothing after its `:`: the lines below it, a list flush with it, or null."""
        if self.pos < len(self.entries):
            column, kind = self.entries[self.pos][:2]
            if column > indent:
                return self.block(column, path)
            if column == indent and kind in (_ITEM_VALUE, _ITEM_KEY):
                return self.sequence(indent, path)
        return None  # what an empty plain scalar resolves to

    def duplicate(self, path: Path, pos: int, column: int) -> None:
        # made once: made per duplicate, 20,000 repeated keys (a hostile settings file) took ~15 s instead of 0.1
        if self.line_numbers is None:
            self.line_numbers = [number for number, entry in enumerate(self.parsed, self.offset + 1)
                                 if entry is not _SKIP]
        self.doc.duplicate_keys.append((path, self.line_numbers[pos], column + 1))

    def yaml11(self, path: Path, numbers: tuple) -> None:
        for below, text, value in numbers:
            if value is _NON_TEXT_KEY:
                self.doc.non_text_keys.append((path + below[:-1], below[-1], text))
            else:
                self.doc.yaml11_numbers.append((path + below, text, value))


class FastLayout:
    """Where each key and value of a document yaml_fast read is, as the composed nodes would say: the lines'
    marks are put together on the first ask (only a file with a finding asks), then kept. Nodes are tuples:
    ("m", line, column, {key: (key line, key column, key's plain text, value node)}), ("s", line, column,
    [item nodes]) and ("v", line, column, plain text or None), lines and columns 1-based."""

    def __init__(self, parsed: list[tuple], offset: int):
        self.parsed: list[tuple] | None = parsed
        self.offset = offset  # lines before the document's own
        self.root: tuple | None = None

    def _tree(self) -> tuple:
        if self.root is None:
            assert self.parsed is not None
            self.root = _MarkTree(self.parsed, self.offset).tree()
            self.parsed = None
        return self.root

    def position(self, path: Path, *, key: bool = False) -> tuple[int, int]:
        node = self._tree()
        last = len(path) - 1
        for depth, part in enumerate(path):
            if node[0] == "m":
                match = node[3].get(part)
                if match is None:
                    break
                node = ("v", *match[:3]) if key and depth == last else match[3]
            elif node[0] == "s" and isinstance(part, int) and 0 <= part < len(node[3]):
                node = node[3][part]
            else:
                break
        return node[1], node[2]

    def plain_text(self, path: Path, *, key: bool = False) -> str | None:
        node = self._tree()
        last = len(path) - 1
        for depth, part in enumerate(path):
            if node[0] == "m" and (match := node[3].get(part)) is not None:
                node = ("v", *match[:3]) if key and depth == last else match[3]
            elif node[0] == "s" and isinstance(part, int) and 0 <= part < len(node[3]):
                node = node[3][part]
            else:
                return None
        return node[3] if node[0] == "v" and node[3] else None


class _MarkTree:
    """FastLayout's nodes from the lines, in the structure _Assemble found (checked there already)."""

    def __init__(self, parsed: list[tuple], offset: int):
        self.numbers = [number for number, entry in enumerate(parsed, offset + 1) if entry is not _SKIP]
        self.entries = [entry for entry in parsed if entry is not _SKIP]
        self.pos = 0

    def tree(self) -> tuple:
        return self.block(self.entries[0][0])

    def block(self, indent: int) -> tuple:
        if self.entries[self.pos][1] in (_ITEM_VALUE, _ITEM_KEY):
            return self.sequence(indent)
        return self.mapping(indent)

    def mapping(self, indent: int) -> tuple:
        entries, numbers = self.entries, self.numbers
        start = (numbers[self.pos], entries[self.pos][0] + 1)  # a block mapping starts at its first key
        pairs: dict = {}
        while self.pos < len(entries) and entries[self.pos][0] == indent:
            column, kind, key, _, fresh, _, (key_text, value_marks) = entries[self.pos]
            number = numbers[self.pos]
            self.pos += 1
            if kind == _KEY_VALUE:
                child = _value_node(number, value_marks)
            else:
                child = self.nested(indent, number, value_marks)
            pairs[key] = (number, column + 1, key_text, child)  # the last of duplicates, as in the data
        return ("m", *start, pairs)

    def sequence(self, indent: int) -> tuple:
        entries, numbers = self.entries, self.numbers
        start = (numbers[self.pos], indent + 1)  # a block list starts at its first dash
        items: list = []
        while self.pos < len(entries) and entries[self.pos][0] == indent:
            _, kind, _, value, fresh, _, marks = entries[self.pos]
            if kind == _ITEM_VALUE:
                items.append(_value_node(numbers[self.pos], marks[1]))
                self.pos += 1
            elif kind == _ITEM_KEY:
                entries[self.pos] = value  # the key line after the dash (this tree's own list)
                items.append(self.mapping(value[0]))
            else:
                break
        return ("s", *start, items)

    def nested(self, indent: int, number: int, empty_marks: tuple) -> tuple:
        if self.pos < len(self.entries):
            column, kind = self.entries[self.pos][:2]
            if column > indent:
                return self.block(column)
            if column == indent and kind in (_ITEM_VALUE, _ITEM_KEY):
                return self.sequence(indent)
        return _value_node(number, empty_marks)


def _value_node(number: int, marks: tuple) -> tuple:
    """A FastLayout node of a value's marks, on line `number`."""
    kind, column, body = marks
    if kind == "v":
        return ("v", number, column, body)
    if kind == "s":
        return ("s", number, column, [_value_node(number, item) for item in body])
    return ("m", number, column, {key: (number, key_column, key_text, _value_node(number, item))
                                  for key, (key_column, key_text, item) in body.items()})


def _flow_plain(text: str) -> str:
    """A plain scalar inside a one-line flow collection. libyaml refuses a `:` there before `,?[]{}` ("found
    unexpected ':'"); the brackets and comma end the scalar and `?` is declined (_FLOW_STOP), so `:` at its end
    is declined."""
    if not _plain_start_ok(text, True) or text.endswith((" ", ":")) or ": " in text:
        raise _Decline
    return text


def _key_end(content: str) -> int | None:
    """Where the `:` after a key is (the key quoted or plain), or None when the line is no `key: ...`."""
    if content[0] in "'\"":
        quote_end = content.find(content[0], 1)
        if quote_end > 0 and content[quote_end + 1:quote_end + 2] == ":" and \
                content[quote_end + 2:quote_end + 3] in ("", " "):
            return quote_end + 1
        return None
    cut = content.find(" #")
    head = content if cut < 0 else content[:cut]
    end = head.find(": ")
    if end < 0:
        return len(head) - 1 if head.endswith(":") else None
    return end
