"""Comparable backend and server versions, ordered by PEP 440 (`0.11.0rc1` < `0.11.0` < `0.11.0.post1` <
`0.11.1`; four-part releases such as `0.10.1.1` keep every part).

Accepted spellings: a leading `v` (`v0.11.0`, GPUStack's tags), a local part (`0.8.5+cu124`), and llama.cpp build
tags (`b6000` -> 6000, comparable with other builds only). Anything else (`latest`, `main`, a commit) is unknown.

`Version` is PEP 440's own rule, written here rather than taken from `packaging`: importing packaging.version was
~20 M instructions of every `gsg validate` run (~1.5 % of validating 1,000 specs; docs/performance.md, twenty-first
round). tests/core/test_versions.py holds parsing, normal form and order against packaging on generated versions;
the one difference is deliberate: letters and digits are ASCII only (packaging's case-insensitive pattern also takes
the Kelvin sign as `k` and a dotless i as `i` in a local part).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

# PEP 440, appendix B (the permissive form every normaliser accepts): epoch, release, pre, post, dev, local.
_PEP440 = re.compile(
    r"""
    v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?:[-_.]?(?P<pre_letter>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_number>[0-9]+)?)?
    (?:-(?P<implicit_post>[0-9]+)|[-_.]?(?P<post_letter>post|rev|r)[-_.]?(?P<post_number>[0-9]+)?)?
    (?:[-_.]?(?P<dev_letter>dev)[-_.]?(?P<dev_number>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    """,
    re.VERBOSE | re.IGNORECASE | re.ASCII,
)
_PRE_LETTERS = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "c": "rc", "pre": "rc", "preview": "rc", "rc": "rc"}
_LOCAL_SEPARATORS = re.compile(r"[-_.]")


class InvalidVersion(ValueError):
    """Text that is no PEP 440 version."""


class Version:
    """A PEP 440 version: parsed once, compared by its sort key, shown in normal form (`V0.11.0-RC.1` -> 0.11.0rc1)."""

    __slots__ = ("epoch", "release", "pre", "post", "dev", "local", "_key")

    def __init__(self, text: str):
        found = _PEP440.fullmatch(text.strip())
        if found is None:
            raise InvalidVersion(f"not a PEP 440 version: {text!r}")
        part = found.group
        self.epoch = int(part("epoch") or 0)
        self.release: tuple[int, ...] = tuple(int(n) for n in part("release").split("."))
        self.pre = (_PRE_LETTERS[part("pre_letter").lower()], int(part("pre_number") or 0)) \
            if part("pre_letter") else None
        post = part("implicit_post") or (part("post_number") or "0" if part("post_letter") else None)
        self.post = int(post) if post is not None else None
        self.dev = int(part("dev_number") or 0) if part("dev_letter") else None
        self.local = ".".join(str(int(piece)) if piece.isdigit() else piece  # +ubuntu.007 -> ubuntu.7
                              for piece in _LOCAL_SEPARATORS.split(part("local").lower())) if part("local") else None
        self._key = self._sort_key()

    def _sort_key(self) -> tuple:
        """PEP 440's order as one tuple: trailing zeros of the release do not count (1.0 == 1.0.0); a dev release
        of no pre or post release sorts before every pre-release of its release; a release without pre-release
        after its pre-releases; without post or dev after its post and dev releases as PEP 440 says; a local part
        after none, its numeric segments after its letter ones."""
        release = list(self.release)
        while release and release[-1] == 0:
            release.pop()
        if self.pre is not None:
            pre: tuple = (1, *self.pre)
        else:
            pre = (0,) if self.post is None and self.dev is not None else (2,)
        post = (0,) if self.post is None else (1, self.post)
        dev = (1,) if self.dev is None else (0, self.dev)
        local: tuple = (0,)
        if self.local is not None:
            local = (1, tuple((1, int(piece), "") if piece.isdigit() else (0, 0, piece)
                              for piece in self.local.split(".")))
        return self.epoch, tuple(release), pre, post, dev, local

    @property
    def public(self) -> str:
        return str(self).split("+", 1)[0]

    @property
    def base_version(self) -> str:
        epoch = f"{self.epoch}!" if self.epoch else ""
        return epoch + ".".join(map(str, self.release))

    @property
    def is_prerelease(self) -> bool:
        return self.pre is not None or self.dev is not None

    @property
    def is_postrelease(self) -> bool:
        return self.post is not None

    @property
    def is_devrelease(self) -> bool:
        return self.dev is not None

    @property
    def major(self) -> int:
        return self.release[0]

    @property
    def minor(self) -> int:
        return self.release[1] if len(self.release) > 1 else 0

    @property
    def micro(self) -> int:
        return self.release[2] if len(self.release) > 2 else 0

    def __str__(self) -> str:
        text = self.base_version
        if self.pre is not None:
            text += f"{self.pre[0]}{self.pre[1]}"
        if self.post is not None:
            text += f".post{self.post}"
        if self.dev is not None:
            text += f".dev{self.dev}"
        if self.local is not None:
            text += f"+{self.local}"
        return text

    def __repr__(self) -> str:
        return f"<Version({str(self)!r})>"

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other: Any) -> bool:
        return self._key == other._key if isinstance(other, Version) else NotImplemented

    def __ne__(self, other: Any) -> bool:
        return self._key != other._key if isinstance(other, Version) else NotImplemented

    def __lt__(self, other: Any) -> bool:
        return self._key < other._key if isinstance(other, Version) else NotImplemented

    def __le__(self, other: Any) -> bool:
        return self._key <= other._key if isinstance(other, Version) else NotImplemented

    def __gt__(self, other: Any) -> bool:
        return self._key > other._key if isinstance(other, Version) else NotImplemented

    def __ge__(self, other: Any) -> bool:
        return self._key >= other._key if isinstance(other, Version) else NotImplemented


# ASCII digits only: \d takes any script's digits (b٣), which Version() refuses with InvalidVersion
_LLAMACPP_BUILD = re.compile(r"^b([0-9]+)$")
# past this a version is no version; also keeps Version()'s int() under Python's 4,300-digit limit (a ValueError)
MAX_VERSION_CHARS = 128
ZERO = Version("0")  # what an unknown version compares as where a comparison needs one

__all__ = ["InvalidVersion", "Version", "ZERO", "at_least", "gpustack_dev_build", "parse_version", "version_lt"]


@lru_cache(maxsize=256)
def parse_version(text: str | None) -> Version | None:
    if not text:
        return None
    raw = str(text).strip()
    if len(raw) > MAX_VERSION_CHARS:
        return None
    build = _LLAMACPP_BUILD.match(raw)
    try:
        return Version(build.group(1) if build else raw)
    except ValueError:  # InvalidVersion, or an int() past Python's digit limit
        return None


def at_least(text: str | None, bound: str) -> bool:
    """text >= bound; an unknown version is never at least anything."""
    parsed = parse_version(text)
    return parsed is not None and parsed >= Version(bound)


def version_lt(a: str | None, b: str) -> bool:
    """a < b; an unknown version is never 'below' anything."""
    pa, pb = parse_version(a), parse_version(b)
    if pa is None or pb is None:
        return False
    return pa < pb


def gpustack_dev_build(version: str | None) -> bool:
    """GPUStack run from source reports 0.0.0 (gpustack/__init__.py; a release build writes its tag there): the
    development line, newer than any release, not a 0.x server. Its /v2 API is checked by the calls themselves."""
    parsed = parse_version(version)
    return parsed is not None and parsed.release == (0, 0, 0)
