"""The form of a spec's model source (pure): hub repo ids, file paths in a repo, local paths on a worker.

Each check returns None for a good value, else a `Problem`: why the value is refused and, when gsg can tell,
the value to write instead (a hub URL pasted into `huggingface_repo_id` holds the id).
"""

from __future__ import annotations

import functools
import re

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.values import frozen_value

# huggingface_hub's validate_repo_id (utils/_validators.py): `name` or `namespace/name`, ASCII letters, digits,
# '-', '_' and '.', neither part starting or ending with '-' or '.', the name at most 96 characters, no '--' or
# '..', not ending in '.git'. ModelScope ids are `owner/name` of the same alphabet.
_PART = r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?"
REPO_ID = re.compile(rf"^(?:{_PART}/)?{_PART}$")
MAX_NAME = 96
_HUB_URL_PATTERN = (r"^(?:(?:https?://)?(?:www\.)?(?P<host>huggingface\.co|hf\.co|modelscope\.cn|www\.modelscope\.cn)/)"
                    r"(?P<path>[^?#]*)")
# An ASCII value holding none of these (any case) cannot match; the pattern (~2.5 M instructions to compile,
# case-insensitive) is compiled for the first value that may (docs/performance.md, twenty-first round)
_HUB_HOSTS = ("huggingface.co/", "hf.co/", "modelscope.cn/")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_WINDOWS = re.compile(r"^(?:[A-Za-z]:[\\/]|[A-Za-z]:$|\\\\)")


@frozen_value(eq=True)  # compared: a kept answer (repo_id's memo) must equal the check's
class Problem:
    """Why a hub id or file path is refused, and what to write instead when known."""

    __repr__ = fields_repr

    why: str
    fix: str | None = None  # the value to write, when known
    filename: str | None = None  # a file path found in a hub URL (/blob/main/x.gguf)


@functools.cache
def _hub_url() -> re.Pattern[str]:
    return re.compile(_HUB_URL_PATTERN, re.IGNORECASE)


def _from_url(value: str) -> tuple[str | None, str | None]:
    """(repo id, file path) named by a hub URL, or (None, None)."""
    text = value.strip()
    if text.isascii() and not any(host in text.lower() for host in _HUB_HOSTS):
        return None, None  # (past ASCII, IGNORECASE also takes a dotless i or a long s: the pattern decides)
    match = _hub_url().match(text)
    if not match:
        return None, None
    parts = [p for p in match.group("path").split("/") if p]
    if match.group("host").lower().endswith("modelscope.cn") and parts[:1] == ["models"]:
        parts = parts[1:]
    if parts[:1] in (["datasets"], ["spaces"]) or len(parts) < 2:
        return None, None
    repo, rest = "/".join(parts[:2]), parts[2:]
    if len(rest) >= 3 and rest[0] in ("blob", "resolve"):
        return repo, "/".join(rest[2:])
    return repo, None


# Answers kept by (value, field): a pure function of the two, and a repository's specs repeat a handful of model ids
# (10,000 specs, 8 ids: ~1.3 -> ~0.2 us a spec, issue 34). Bounded in entries and in the length of a kept value.
MAX_REPO_IDS_KEPT = 4096
MAX_KEPT_REPO_ID_CHARS = 256  # past the hub's own limits (MAX_NAME a part): a longer value is checked every time
_REPO_ID_ANSWERS: dict[tuple[str, str], Problem | None] = {}


def repo_id(value: str, field: str) -> Problem | None:
    """A `huggingface_repo_id` or `model_scope_model_id` as the hub accepts it."""
    key = (value, field)
    if key in _REPO_ID_ANSWERS:
        return _REPO_ID_ANSWERS[key]
    problem = _repo_id_problem(value, field)
    if len(value) <= MAX_KEPT_REPO_ID_CHARS and len(_REPO_ID_ANSWERS) < MAX_REPO_IDS_KEPT:
        _REPO_ID_ANSWERS[key] = problem  # a Problem is frozen: sharing one is safe
    return problem


def _repo_id_problem(value: str, field: str) -> Problem | None:
    hub = "ModelScope" if field.startswith("model_scope") else "Hugging Face"
    repo, filename = _from_url(value)
    if repo is not None and repo_id(repo, field) is None:
        return Problem(f"is a URL, not a {hub} repo id", repo, filename)
    if _URL.match(value):
        return Problem(f"is a URL, not a {hub} repo id (`namespace/name`)")
    if value != value.strip():
        stripped = value.strip()
        return Problem("has leading or trailing whitespace", stripped if repo_id(stripped, field) is None else None)
    if value.count("/") > 1:
        return Problem("has more than one '/' (a repo id is `name` or `namespace/name`)")
    name = value.rsplit("/", 1)[-1]
    if len(name) > MAX_NAME:
        return Problem(f"has a name of {len(name):,} characters (the hub allows at most {MAX_NAME})")
    if not REPO_ID.match(value):
        return Problem("may hold only ASCII letters, digits, '-', '_' and '.', and no part may start or end with "
                       "'-' or '.'")
    if "--" in value or ".." in value:
        return Problem("holds '--' or '..', which the hub refuses in repo ids")
    if value.endswith(".git"):
        return Problem("ends in '.git' (a repo id names the repo, not its git remote)", value[:-4])
    return None


def repo_file(value: str) -> Problem | None:
    """A file path inside a hub repo (`huggingface_filename`, `model_scope_file_path`; may be a glob)."""
    if not value.strip():
        return Problem("is empty")
    if value.startswith("/") or _WINDOWS.match(value):
        return Problem("is an absolute path; it names a file inside the repo (e.g. `model-Q4_K_M.gguf`)")
    if ".." in re.split(r"[\\/]", value):
        return Problem("holds a '..' component; it names a file inside the repo")
    if _URL.match(value):
        return Problem("is a URL; it names a file inside the repo")
    return None


def local_path(value: str) -> Problem | None:
    """A `local_path`: an absolute POSIX path on GPUStack's server and workers."""
    if _WINDOWS.match(value):
        return Problem("is a Windows path; GPUStack's server and workers read it as a POSIX path, where it names "
                       "no file (write the absolute path as the workers see it, e.g. /models/...)")
    if value.startswith("~"):
        return Problem("starts with '~', which nothing expands (GPUStack opens the path as written, without a "
                       "shell); write the absolute path, e.g. /home/USER/...")
    if not value.startswith("/"):
        return Problem("is a relative path; GPUStack's server and workers resolve it against their own working "
                       "directory, not the spec's folder (write the absolute path, e.g. /models/...)")
    return None
