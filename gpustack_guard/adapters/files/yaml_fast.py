"""A fast path of load_documents for the YAML nearly every spec is written in.

Why: composing PyYAML nodes (libyaml parses in C, but every node and mark is a Python object) was the largest
part of loading a spec tree: at 10,000 specs ~0.49 s for compose_all and ~0.3 s to build values from its nodes
(docs/performance.md, round 23). This module reads the common shape line by line into the same values; positions
are not recorded: the first position()/plain_text() call composes the document as before (LocatedDocument.source),
which only files with a finding pay (2,250 of the 10,000 specs of benchmarks/scale.py's tree).

Accepts one document of: block mappings; block sequences of `- ` items (flush under their key or indented,
mappings as items); plain scalars on one line; '...' and "..." scalars on one line without '' or a backslash;
one-line flow lists and mappings of plain scalars ([a, b], {rack: r1}); comments and blank lines. Scalars resolve
through the full path's own _resolve and _scalar (YAML 1.1 implicit types), duplicate keys and YAML 1.1-only
numbers are reported as there. Anything else (anchors, aliases, tags, `<<`, `---`/`...`, block scalars,
continued scalars, escapes, tabs, CR, BOM, control characters, `? ` keys, nested flow, odd indentation, a file
near a limit, a scalar the full path would refuse) returns None, and load_documents composes the text as before.
tests/adapters/files/test_yaml_fast.py runs both paths on every YAML file of the repository and on the
neighbours of this shape.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from gpustack_guard.adapters.files.yaml_positions import (
    _FLOAT,
    _INT,
    _PLAIN,
    _STR,
    LocatedDocument,
    Path,
    YamlSyntaxError,
    _resolve,
    _scalar,
    _yaml11_only,
)

# Files longer than this go the full way: node_bound() of a shorter text stays below COUNT_ABOVE (3 nodes a
# character at most), and no scalar reaches MAX_SCALAR_CHARS or a key YAML's 1,024 characters per line check.
MAX_FAST_CHARS = 16_000
_MAX_FAST_DEPTH = 32  # half of MAX_DEPTH
_MAX_KEY_CHARS = 1_000  # below YAML's 1,024-character implicit key
# Only spaces, newlines and printable characters that are no YAML line break (NEL, U+2028/9) and no BOM.
_REFUSED = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")  # what a plain scalar may not start with (`-x` aside)
_FLOW_SPECIAL = frozenset("[]{}#'\"")  # inside a one-line flow collection: nesting, comments, quotes
_NO_MARK = yaml.Mark("", 0, 0, 0, None, None)  # _scalar's errors need one; they only make us decline


class _Decline(Exception):
    """Not the common shape: the full path reads the text."""


def fast_documents(text: str, max_items: int) -> list[LocatedDocument] | None:
    """The document of `text` as load_documents would build it, or None when the text is not the common shape."""
    if len(text) > MAX_FAST_CHARS or _REFUSED.search(text) is not None:
        return None
    if text.startswith(("---", "...")) or "\n---" in text or "\n..." in text:
        return None
    if text.count("\n") + text.count(",") + 2 > max_items:  # an item needs its own line or comma
        return None
    entries = _entries(text)
    if not entries:
        return None
    doc = LocatedDocument(data=None, start_line=entries[0][0], source=text)
    scan = _Scan(entries, doc)
    try:
        doc.data = scan.block(entries[0][1], ())
    except _Decline:
        return None
    if scan.pos != len(entries):  # a line less indented than the root's first
        return None
    return [doc]


def _entries(text: str) -> list[list]:
    """[line number, indent, content] of each line that is not blank or a comment; trailing spaces dropped."""
    entries = []
    for number, line in enumerate(text.split("\n"), 1):
        content = line.lstrip(" ")
        if content and content[0] != "#":
            entries.append([number, len(line) - len(content), content.rstrip(" ")])
    return entries


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
    """What the full path builds of a plain scalar (its own memoised resolver and constructor) and its tag."""
    tag = _resolve(yaml.ScalarNode, text, _PLAIN)
    if tag == _STR:
        return text, tag
    try:
        return _scalar(yaml.ScalarNode(tag, text, _NO_MARK, _NO_MARK)), tag
    except YamlSyntaxError:  # `<<`, `=`, 2001-13-45, a number past MAX_NUMBER_CHARS: the full path says so
        raise _Decline from None


class _Scan:
    """Values from the entries, in the full path's order (a key before its value, depth first), so duplicate
    keys and YAML 1.1-only numbers are listed in the same order."""

    def __init__(self, entries: list[list], doc: LocatedDocument):
        self.entries = entries
        self.doc = doc
        self.pos = 0

    def block(self, indent: int, path: Path) -> Any:
        if len(path) >= _MAX_FAST_DEPTH:
            raise _Decline
        if _is_item(self.entries[self.pos][2]):
            return self.sequence(indent, path)
        return self.mapping(indent, path)

    def sequence(self, indent: int, path: Path) -> list:
        items: list = []
        entries = self.entries
        while self.pos < len(entries):
            entry = entries[self.pos]
            if entry[1] < indent or not _is_item(entry[2]):
                break
            if entry[1] > indent:
                raise _Decline
            rest = entry[2][2:].lstrip(" ")
            if not rest or rest[0] == "#" or _is_item(rest):
                raise _Decline  # an item on the next lines, or a list in a list
            item_path = path + (len(items),)
            if rest[0] not in "[{" and _key_end(rest) is not None:  # `- key: value` starts a mapping
                entry[1] += len(entry[2]) - len(rest)
                entry[2] = rest
                if len(item_path) >= _MAX_FAST_DEPTH:
                    raise _Decline
                items.append(self.mapping(entry[1], item_path))
            else:
                self.pos += 1
                items.append(self.inline(rest, item_path))
                self.not_continued(indent)
        return items

    def mapping(self, indent: int, path: Path) -> dict:
        result: dict = {}
        own: set = set()
        entries = self.entries
        while self.pos < len(entries):
            number, column, content = entries[self.pos]
            if column < indent:
                break
            if column > indent:
                raise _Decline
            end = _key_end(content)
            if end is None:
                raise _Decline  # a list item or scalar among keys
            key = self.key(content[:end])
            self.pos += 1
            if key in own:
                self.doc.duplicate_keys.append((path + (key,), number, column + 1))
            own.add(key)
            rest = content[end + 1:].lstrip(" ")
            if rest and rest[0] != "#":
                result[key] = self.inline(rest, path + (key,))
                self.not_continued(indent)
            else:
                result[key] = self.nested(indent, path + (key,))
        return result

    def nested(self, indent: int, path: Path) -> Any:
        """The value of a key with nothing after its `:`: the lines below it, a list flush with it, or null."""
        if self.pos < len(self.entries):
            _, column, content = self.entries[self.pos]
            if column > indent:
                return self.block(column, path)
            if column == indent and _is_item(content):
                return self.sequence(indent, path)
        return None  # what an empty plain scalar resolves to

    def not_continued(self, indent: int) -> None:
        """A value on its key's line ends there: a deeper line after it would continue the scalar."""
        if self.pos < len(self.entries) and self.entries[self.pos][1] > indent:
            raise _Decline

    def key(self, text: str) -> Any:
        if not text:
            raise _Decline  # `: value`, an empty key
        if text[0] in "'\"":
            body, end = _quoted(text)
            if end != len(text):
                raise _Decline
            return body
        if len(text) > _MAX_KEY_CHARS or text.endswith(" ") or "#" in text or not _plain_start_ok(text, False):
            raise _Decline
        return _plain_value(text)[0]  # a key's number is not checked for YAML 1.1 (the full path's mapping())

    def inline(self, rest: str, path: Path) -> Any:
        """A value written on its key's or dash's line."""
        first = rest[0]
        if first in "'\"":
            body, end = _quoted(rest)
            _only_comment(rest[end:])
            return body
        if first == "[" or first == "{":
            return self.flow(rest, path)
        cut = rest.find(" #")
        text = (rest if cut < 0 else rest[:cut]).rstrip(" ")
        if not _plain_start_ok(text, False) or not _plain_body_ok(text):
            raise _Decline
        return self.plain(text, path)

    def plain(self, text: str, path: Path) -> Any:
        value, tag = _plain_value(text)
        if tag in (_INT, _FLOAT) and _yaml11_only(text, value):
            self.doc.yaml11_numbers.append((path, text, value))
        return value

    def flow(self, rest: str, path: Path) -> Any:
        closer = "]" if rest[0] == "[" else "}"
        end = rest.find(closer)
        if end < 0:
            raise _Decline  # continued on the next line
        _only_comment(rest[end + 1:])
        inner = rest[1:end]
        if any(c in _FLOW_SPECIAL for c in inner):
            raise _Decline
        if not inner.strip(" "):
            return [] if closer == "]" else {}
        parts = [part.strip(" ") for part in inner.split(",")]
        if closer == "]":
            return [self.plain(_flow_plain(part), path + (i,)) for i, part in enumerate(parts)]
        result: dict = {}
        for part in parts:
            key_text, separator, value_text = part.partition(": ")
            if not separator or ":" in key_text:
                raise _Decline
            key = _plain_value(_flow_plain(key_text))[0]
            if key in result:
                raise _Decline  # the full path reports it with its column
            result[key] = self.plain(_flow_plain(value_text.lstrip(" ")), path + (key,))
        return result


def _flow_plain(text: str) -> str:
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
