"""Comparable backend and server versions, ordered by PEP 440 (`0.11.0rc1` < `0.11.0` < `0.11.0.post1` <
`0.11.1`; four-part releases such as `0.10.1.1` keep every part).

Accepted spellings: a leading `v` (`v0.11.0`, GPUStack's tags), a local part (`0.8.5+cu124`), and llama.cpp build
tags (`b6000` -> 6000, comparable with other builds only). Anything else (`latest`, `main`, a commit) is unknown.
"""

from __future__ import annotations

import re
from functools import lru_cache

from packaging.version import InvalidVersion, Version

# ASCII digits only: \d takes any script's digits (b٣), which Version() refuses with InvalidVersion
_LLAMACPP_BUILD = re.compile(r"^b([0-9]+)$")
# past this a version is no version; also keeps Version()'s int() under Python's 4,300-digit limit (a ValueError)
MAX_VERSION_CHARS = 128
ZERO = Version("0")  # what an unknown version compares as where a comparison needs one

__all__ = ["Version", "ZERO", "at_least", "gpustack_dev_build", "parse_version", "version_lt"]


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
    except (InvalidVersion, ValueError):  # ValueError: a number packaging's own pattern lets through, int() not
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
