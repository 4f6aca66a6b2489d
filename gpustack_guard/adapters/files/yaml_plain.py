"""What an unquoted one-line scalar is to PyYAML's SafeLoader (YAML 1.1 implicit types), without importing PyYAML.

Why: yaml_fast reads nearly every file gsg loads without composing nodes, and only needed PyYAML for the tag and
value of plain scalars. Importing PyYAML costs ~124 M instructions (its reader compiles a character class over
all of Unicode), ~7 % of `gsg validate` on the 1,000-spec tree (benchmarks/scale.py; docs/performance.md,
twentieth round). So the tag is decided here, and the values nearly every spec holds (text, decimal integers and
fractions, true/false, null) are built here; any other number or a date is built by yaml_positions with PyYAML
(imported then), so what is built never differs from the full path.

The tag: SafeLoader picks its implicit resolvers by the scalar's first character and takes the first whose
pattern matches the whole text; a text no pattern matches is a string. The patterns below are written from the
YAML 1.1 type definitions (yaml.org/type/bool, int, float, null, timestamp, merge, value) as PyYAML reads them: a
float needs a '.', '_' may separate digits, base 60 for ints and floats. tests/adapters/files/test_yaml_plain.py
compares plain_tag with PyYAML's own resolver on every scalar of the repository's YAML and on generated texts.
"""

from __future__ import annotations

import functools
import re
from typing import Any

STR = "tag:yaml.org,2002:str"
INT = "tag:yaml.org,2002:int"
FLOAT = "tag:yaml.org,2002:float"
BOOL = "tag:yaml.org,2002:bool"
NULL = "tag:yaml.org,2002:null"
TIMESTAMP = "tag:yaml.org,2002:timestamp"
MERGE = "tag:yaml.org,2002:merge"
VALUE = "tag:yaml.org,2002:value"

_BOOLS = {word: value for words, value in (("yes Yes YES true True TRUE on On ON", True),
                                           ("no No NO false False FALSE off Off OFF", False))
          for word in words.split()}
_NULLS = frozenset(("~", "null", "Null", "NULL", ""))

_DIGITS = r"[0-9][0-9_]*"
_EXPONENT = r"(?:[eE][-+][0-9]+)?"
_SIXTY = r"(?::[0-5]?[0-9])+"  # base-60 places after the first: 1:30, 1:30:15
_INT_PATTERN = rf"""[-+]?(?:
    0b[01_]+ | 0x[0-9a-fA-F_]+ | 0[0-7_]+ | 0 | [1-9][0-9_]* | [1-9][0-9_]*{_SIXTY}
)"""
_FLOAT_PATTERN = rf"""
    [-+]?{_DIGITS}\.[0-9_]*{_EXPONENT} | \.{_DIGITS}{_EXPONENT} | [-+]?{_DIGITS}{_SIXTY}\.[0-9_]*
    | [-+]?\.(?:inf|Inf|INF) | \.(?:nan|NaN|NAN)
"""
_TIMESTAMP_PATTERN = r"""
    [0-9]{4}-[0-9]{2}-[0-9]{2}
    | [0-9]{4}-[0-9]{1,2}-[0-9]{1,2} (?:[Tt]|[ \t]+) [0-9]{1,2}:[0-9]{2}:[0-9]{2} (?:\.[0-9]*)?
      (?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?
"""


@functools.cache  # the three patterns cost ~6.6 M instructions to compile; the shapes below spare most runs them
def _resolver_patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    return (re.compile(_FLOAT_PATTERN, re.X), re.compile(_INT_PATTERN, re.X), re.compile(_TIMESTAMP_PATTERN, re.X))


# the characters that start a number (int, float) or a date: the only texts a pattern above can match
_NUMBER_START = frozenset("-+.0123456789")

# The shapes built here: a decimal integer without leading zeros or '_', and a fraction of plain digits. Each is
# also a shape whose tag is known without the resolver's patterns: every _DECIMAL text is an int (no float form
# lacks '.', ':' and '.inf'), every _FRACTION text a float (the float pattern's first form); a release number such as
# 0.6.4 (two dots or more, digits between) is text, as is a number followed by letters, 24GiB (no int or float form
# holds a letter past a leading nonzero digit, and a date has a '-').
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_FRACTION = re.compile(r"[-+]?[0-9]+\.[0-9]*")
_SIGNED_NUMBER_NEXT = frozenset("0123456789.")
_TEXT_SHAPES = re.compile(r"[0-9]+(?:\.[0-9]+){2,}|[1-9][0-9]*[A-Za-z]+")

NOT_BUILT = object()  # plain_value's answer for a number or date it leaves to PyYAML


def _fullmatch(pattern: re.Pattern[str], text: str) -> bool:
    # PyYAML's patterns end in `$`, which also matches before a final newline; a one-line scalar has none
    return pattern.fullmatch(text) is not None


def plain_tag(text: str) -> str:
    """The tag SafeLoader's implicit resolvers give the unquoted scalar `text` (one line, no newline)."""
    if text in _NULLS:
        return NULL
    if text in _BOOLS:
        return BOOL
    first = text[0]
    if first in _NUMBER_START:
        if first in "-+" and text[1:2] not in _SIGNED_NUMBER_NEXT:
            return STR  # an argument (--max-model-len=8192): a number or date has a digit or '.' after its sign
        if _fullmatch(_DECIMAL, text):
            return INT
        if _fullmatch(_FRACTION, text):
            return FLOAT
        if _fullmatch(_TEXT_SHAPES, text):
            return STR
        floats, ints, timestamps = _resolver_patterns()
        if _fullmatch(floats, text):
            return FLOAT
        if _fullmatch(ints, text):
            return INT
        if first.isdigit() and _fullmatch(timestamps, text):
            return TIMESTAMP
        return STR
    if text == "<<":
        return MERGE
    if text == "=":
        return VALUE
    return STR


def plain_value(tag: str, text: str, max_number_chars: int) -> Any:
    """The value of a plain scalar of `tag` for the shapes nearly every spec holds, or NOT_BUILT (other numbers,
    dates, `<<`, `=`, a number longer than `max_number_chars`: yaml_positions builds or refuses those)."""
    if tag == STR:
        return text
    if tag == BOOL:
        return _BOOLS[text]
    if tag == NULL:
        return None
    if len(text) > max_number_chars:
        return NOT_BUILT
    try:
        if tag == INT and _DECIMAL.fullmatch(text):
            return int(text)
        if tag == FLOAT and _FRACTION.fullmatch(text):
            return float(text)
    except ValueError:  # past Python's 4,300 digits (a limit raised for a test): the full path says why
        return NOT_BUILT
    return NOT_BUILT
