"""`json.dumps(obj, indent=2)`, byte for byte, with the C encoder doing the values (issue 34).

With `indent` set, Python's json module never uses its C encoder (json/encoder.py: `self.indent is None` is a
condition of `c_make_encoder`), and the pure-Python one cost ~13 s self-time of a 22 s `validate -o json` at
10,000 specs (2.5 M lines). Here only containers that hold a non-empty container are walked in Python; every
other container is one C-encoder call whose item separator carries the newline and the indent of its level, so
it writes what the indenting encoder writes: `{` or `[`, each item on its own line at the next level, the
closing bracket back at this level, `{}`/`[]` when empty. Keys, strings (ASCII-escaped), numbers, booleans and
null come from the same C functions either way.
"""

from __future__ import annotations

import json
from functools import lru_cache
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]

from gpustack_guard.core.pieced import PiecedText

INDENT = "  "
_CONTAINERS = (dict, list, tuple)


@lru_cache(maxsize=64)
def _encoder(level: int):
    """A C encoder whose item separator puts the next item on its own line at `level`; made once, since
    JSONEncoder.encode builds a new one per call (~2 us, 300,000 containers at 10,000 specs)."""
    plain = json.JSONEncoder()  # json.dumps' defaults: ensure_ascii, allow_nan, no sort, TypeError as default
    return c_make_encoder({}, plain.default, encode_basestring_ascii, None, ": ", ",\n" + INDENT * level,
                          False, False, True)


def _flat(value: object, level: int) -> str:
    return "".join(_encoder(level)(value, 0))


def _key(key: object) -> str:
    """A dict key as json writes it (a str escaped; an int, float, bool or None as its JSON text, quoted)."""
    if isinstance(key, str):
        return encode_basestring_ascii(key)
    head = _flat({key: 0}, 0)  # '{"1": 0}': the encoder's own key conversion and its TypeError
    return head[1:-4]


# What stands in for a nested container while its parent is encoded; its JSON text is then replaced by the
# child's. A real key or string can encode to the same text (the value "\0", or '"\0' holding it after an
# escaped quote), so a parent whose count of it is not its count of children is written item by item instead.
_HOLE = "\0"
_HOLE_JSON = encode_basestring_ascii(_HOLE)


class Shared:
    """A value that appears many times in one document (an estimate shared by every spec with the same inputs):
    written as its own value would be, and its text made once per indentation level. The value must not change
    while the document is written."""

    __slots__ = ("value", "_texts")

    def __init__(self, value: object) -> None:
        self.value = value
        self._texts: dict[int, str] = {}

    def text(self, level: int) -> str:
        made = self._texts.get(level)
        if made is None:
            made = self._texts[level] = _indented(self.value, level)
        return made


def _write(value: object, level: int, out: list[str], shared_at: list[int] | None = None) -> None:
    """Append the value's indented text to `out` (joined once at the end: a parent copying its children's text
    would copy the whole report once per level); where a Shared value's text went, appended to `shared_at`."""
    if type(value) is Shared:
        if shared_at is not None:
            shared_at.append(len(out))
        out.append(value.text(level))
        return
    if not isinstance(value, _CONTAINERS) or not value:
        out.append(_flat(value, 0))
        return
    children: list = []
    keep = children.append

    def held(item):  # a non-empty container (or a shared value) is kept aside, and a hole takes its place
        if isinstance(item, _CONTAINERS) and item or type(item) is Shared:
            keep(item)
            return _HOLE
        return item

    shallow = ({key: held(item) for key, item in value.items()} if isinstance(value, dict)
               else [held(item) for item in value])
    flat = _flat(shallow, level + 1)  # one C call: the scalars, each on its own line at the next level
    if not children:
        out += (flat[0], "\n", INDENT * (level + 1), flat[1:-1], "\n", INDENT * level, flat[-1])
        return
    pieces = flat[1:-1].split(_HOLE_JSON)
    if len(pieces) != len(children) + 1:
        out.append(_by_item(value, level))
        return
    out += (flat[0], "\n", INDENT * (level + 1), pieces[0])
    for child, piece in zip(children, pieces[1:]):
        _write(child, level + 1, out, shared_at)
        out.append(piece)
    out += ("\n", INDENT * level, flat[-1])


def _shared_value(value: object) -> object:
    if type(value) is Shared:
        return value.value
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _indented(value: object, level: int) -> str:
    out: list[str] = []
    _write(value, level, out)
    return "".join(out)


def _by_item(value, level: int) -> str:
    """A container written one item at a time (a key or string that reads as a hole is in it)."""
    inner, outer = "\n" + INDENT * (level + 1), "\n" + INDENT * level
    if isinstance(value, dict):
        parts = [_key(key) + ": " + _indented(item, level + 1) for key, item in value.items()]
        return "{" + inner + ("," + inner).join(parts) + outer + "}"
    return "[" + inner + ("," + inner).join(_indented(item, level + 1) for item in value) + outer + "]"


def indented(value: object, end: str = "") -> str:
    """`json.dumps(value, indent=2) + end` (ensure_ascii, no sort, default separators), built faster. A
    PiecedText whose pieces are the Shared values' texts (each one str object however often it appears) and the
    text between them, so the output's scrub and terminal_safe do each shared text once (core/pieced.py)."""
    if c_make_encoder is None:  # a Python built without the _json accelerator
        return json.dumps(value, indent=2, default=_shared_value) + end
    out: list[str] = []
    shared_at: list[int] = []
    _write(value, 0, out, shared_at)
    pieces: list[str] = []
    start = 0
    for at in shared_at:
        pieces += ("".join(out[start:at]), out[at])
        start = at + 1
    out.append(end)
    pieces.append("".join(out[start:]))
    return PiecedText.join(pieces)
