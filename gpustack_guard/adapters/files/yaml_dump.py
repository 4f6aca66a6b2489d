"""Writing YAML: always through the serializer, with text a person cannot see written as escapes.

Server text is data. Every file gsg writes as YAML (snapshots, exported specs, rendered documents, advised
specs) is produced by `dump` / `dump_all`, never by joining strings, so a model name, version or meta value
holding newlines and `key: value` lines stays one quoted scalar and can never add a key. A scalar holding a
control, format (bidi, zero-width) or odd space character is written double-quoted with escapes (`"\\u202e"`),
so the file shows what it holds; everything else is written as PyYAML writes it, non-ASCII letters included.
Comments gsg adds above a document go through `comment`.
"""

from __future__ import annotations

from typing import Any, Iterable

import yaml

from gpustack_guard.core.echo import has_unsafe, untrusted


class _Dumper(yaml.SafeDumper):
    """SafeDumper that treats a scalar with unsafe characters as if Unicode were not allowed: PyYAML then
    picks the double-quoted style and escapes every non-ASCII character of that one scalar."""

    def analyze_scalar(self, scalar):
        if not has_unsafe(scalar):
            return super().analyze_scalar(scalar)
        allow, self.allow_unicode = self.allow_unicode, False
        try:
            return super().analyze_scalar(scalar)
        finally:
            self.allow_unicode = allow

    def write_double_quoted(self, text, split=True):
        if not has_unsafe(text):
            return super().write_double_quoted(text, split)
        allow, self.allow_unicode = self.allow_unicode, False
        try:
            return super().write_double_quoted(text, split)
        finally:
            self.allow_unicode = allow


def dump(data: Any, *, width: int = 80, allow_unicode: bool = True) -> str:
    """One YAML document, keys in their given order, non-ASCII letters kept (unless not `allow_unicode`)."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=allow_unicode, width=width)


def dump_all(documents: Iterable[Any]) -> str:
    """Several documents separated by `---`."""
    return yaml.dump_all(documents, Dumper=_Dumper, sort_keys=False, allow_unicode=True)


def comment(text: str) -> str:
    """A `# ...` comment line (with its newline) for text that may come from a server: one line, escaped, so
    it can never end the comment and start a key."""
    return f"# {untrusted(text)}\n"
