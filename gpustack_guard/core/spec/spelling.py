"""Near-misses of enum values (pure): a value that is one of the known spellings once look-alikes, invisible
characters, case and separators are set aside.

GPUStack compares enum values (backend names among them) exactly. `vLLМ` with a Cyrillic М, `vLLM ` with a
trailing space, `v\u200bLLM` with a zero-width space, `vllm`, `llama-cpp` or `Sglang` all read as the known
value to a reviewer, and none of them is it: GPUStack books such a backend as an unknown (Custom) one. The
matching key of a value is: Unicode NFKC (fullwidth letters, ligatures, no-break spaces), common Cyrillic and
Greek look-alikes mapped to their Latin letters, format characters (zero-width, bidi) dropped, casefolded, and
every space, '-', '_' and '.' dropped. Two values with one key are near-misses of each other; `differences`
says, in words, what sets them apart.
"""

from __future__ import annotations

import unicodedata
from typing import Iterable

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.values import frozen_value

# Cyrillic and Greek letters that render like a Latin one in common fonts (Unicode's confusables.txt, the
# letters that matter for identifiers). NFKC does not fold these: they are distinct letters.
CONFUSABLES = {
    # Cyrillic lowercase
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
    "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ɡ": "g", "һ": "h",
    "ӏ": "l",
    # Cyrillic uppercase
    "А": "A", "В": "B", "Е": "E", "Ё": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
    "У": "Y", "Х": "X", "Ѕ": "S", "І": "I", "Ї": "I", "Ј": "J", "Ԛ": "Q", "Ԝ": "W", "Һ": "H", "Ӏ": "I",
    # Greek
    "α": "a", "ο": "o", "ν": "v", "ι": "i", "κ": "k", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ε": "e",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Latin look-alikes outside ASCII that NFKC keeps
    "ı": "i", "ł": "l", "ℓ": "l",
}
_TRANSLATE = str.maketrans(CONFUSABLES)
SEPARATORS = frozenset(" -_.")
MAX_CHARS = 256  # a longer value is no near-miss of an enum value (and costs nothing to rule out)


def key(value: str) -> str:
    """The matching key: NFKC, look-alikes to Latin, no format characters, casefolded, no separators."""
    text = unicodedata.normalize("NFKC", value).translate(_TRANSLATE)
    return "".join(c for c in text.casefold()
                   if c not in SEPARATORS and not c.isspace() and unicodedata.category(c) != "Cf")


def _name(char: str) -> str:
    return unicodedata.name(char, "").lower() or "an unnamed character"


def _char(char: str) -> str:
    return f"U+{ord(char):04X} {_name(char)}"


def differences(value: str, known: str) -> list[str]:
    """What makes `value` (a near-miss of `known`) differ from it, most telling first."""
    found: list[str] = []
    stripped = value.strip()
    for where, extra in (("leading", value[:len(value) - len(value.lstrip())]),
                         ("trailing", value[len(value.rstrip()):])):
        if extra:
            odd = sorted({_char(c) for c in extra if c != " "})
            found.append(f"{where} whitespace" + (f" ({', '.join(odd)})" if odd else ""))
    seen: set[str] = set()
    for char in stripped:
        if char in seen or char.isascii() and char.isprintable():
            continue
        seen.add(char)
        if char in CONFUSABLES:
            found.append(f"a look-alike letter {_char(char)} in place of '{CONFUSABLES[char]}'")
        elif unicodedata.category(char) == "Cf":
            found.append(f"an invisible character {_char(char)}")
        elif char.isspace():
            found.append(f"a non-ASCII space {_char(char)}")
        elif unicodedata.normalize("NFKC", char) != char:
            found.append(f"a compatibility character {_char(char)} in place of "
                         f"'{unicodedata.normalize('NFKC', char)}'")
        elif not char.isprintable():
            found.append(f"a control character U+{ord(char):04X}")
    plain = unicodedata.normalize("NFKC", stripped).translate(_TRANSLATE)
    plain = "".join(c for c in plain if unicodedata.category(c) != "Cf")
    if [c for c in plain if c not in SEPARATORS and not c.isspace()] != [c for c in known if c not in SEPARATORS]:
        found.append("the case")
    if [c for c in plain if c in SEPARATORS or c.isspace()] != [c for c in known if c in SEPARATORS]:
        found.append("the separators (spaces, '-', '_', '.')")
    return found


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class NearMiss:
    """A value that differs from a known one only in look-alike characters, case or separators."""

    __repr__ = fields_repr

    known: str  # the value it is a near-miss of
    differences: tuple[str, ...]

    @property
    def why(self) -> str:
        *first, last = self.differences
        return f"{', '.join(first)} and {last}" if first else last


def near_miss(value: str, options: Iterable[str]) -> NearMiss | None:
    """The known option `value` is a near-miss of (same key, different text), or None (an exact match or no
    match)."""
    options = list(options)
    if value in options or len(value) > MAX_CHARS:
        return None
    wanted = key(value)
    for option in options:
        if key(option) == wanted and wanted:
            return NearMiss(option, tuple(differences(value, option)) or ("its spelling",))
    return None


def suggest(value: str, options: Iterable[str]) -> str | None:
    """The option to suggest for a value that is not one: a near-miss first, else the closest by difflib on
    the matching keys (a typo such as 'hugingface' or 'binpak')."""
    options = list(options)
    miss = near_miss(value, options)
    if miss:
        return miss.known
    keys = {key(o): o for o in options}
    import difflib  # on a misspelling only (start-up)
    close = difflib.get_close_matches(key(value[:MAX_CHARS]), list(keys), n=1, cutoff=0.6)
    return keys[close[0]] if close else None
