"""The Hugging Face hub cache on disk, in huggingface_hub's own layout, so files that `huggingface-cli download`,
vLLM or transformers fetched serve gsg offline, and files gsg fetches serve them:

    <root>/models--{org}--{name}/
        refs/{revision}            the commit a branch or tag pointed at when last seen (40 hex digits)
        blobs/{etag}               a file's content, named by the hub's ETag (git blob sha1, or sha256 for LFS)
        snapshots/{commit}/{file}  relative symlink to ../../blobs/{etag} (a plain copy where symlinks fail)
        .no_exist/{commit}/{file}  empty: the file is known not to exist at that commit

Every write goes to a process-unique temporary name beside its target and is renamed into place, so two gsg
processes (or gsg and huggingface_hub) writing the same entry never leave half a file: the last rename wins,
with the same content. A cache gsg cannot write to (read-only mount) is read and otherwise left alone.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import Mapping

from gpustack_guard.adapters.files.regular_file import MAX_KEY_FILE_BYTES, read_text_file
from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.values import frozen_value

COMMIT = re.compile(r"^[0-9a-f]{40}$")
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
_TRUE = {"1", "ON", "YES", "TRUE"}


class KnownMissing:
    """The cache records that a file does not exist at a commit (`.no_exist`)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING = KnownMissing()


def expand_path(value: str) -> Path:
    return Path(os.path.expandvars(os.path.expanduser(value)))


def hf_home(environ: Mapping[str, str] = os.environ) -> Path:
    """$HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface (huggingface_hub's rule)."""
    if environ.get("HF_HOME"):
        return expand_path(environ["HF_HOME"])
    return expand_path(os.path.join(environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache"), "huggingface"))


def hub_cache_root(environ: Mapping[str, str] = os.environ) -> Path:
    """$HF_HUB_CACHE, else the legacy $HUGGINGFACE_HUB_CACHE, else <hf_home>/hub."""
    explicit = environ.get("HF_HUB_CACHE") or environ.get("HUGGINGFACE_HUB_CACHE")
    return expand_path(explicit) if explicit else hf_home(environ) / "hub"


def is_commit(revision: str) -> bool:
    return bool(COMMIT.match(revision))


def is_true(value: str | None) -> bool:
    """huggingface_hub's reading of a boolean switch such as HF_HUB_OFFLINE."""
    return (value or "").strip().upper() in _TRUE


def check_repo_file(repo: str, filename: str, revision: str) -> None:
    """A repo id, file name and revision fit for a URL and a cache path: nothing that climbs out of the repo's
    folder (`..`, an absolute path)."""
    if not _REPO_ID.match(repo) or ".." in repo:
        raise ValueError(f"'{repo}' is not a hub repo id (org/name)")
    parts = filename.split("/")
    if filename.startswith("/") or "\\" in filename or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"'{filename}' is not a file name inside hub repo {repo}")
    if revision.startswith("/") or any(p in ("", ".", "..") for p in revision.split("/")):
        raise ValueError(f"'{revision}' is not a revision of hub repo {repo}")


def etag_name(etag: str | None) -> str | None:
    """The hub's ETag as a blob file name (weak prefix and quotes removed), or None when there is none usable."""
    name = (etag or "").removeprefix("W/").strip('"')
    return name if _SAFE_NAME.match(name) and name not in (".", "..") else None


def blob_name(etag: str | None, content: bytes) -> str:
    """The blob's file name: the ETag, or when the answer had none usable the git blob sha1 of the content
    (which is what the hub's ETag is for a file kept in git)."""
    import hashlib  # on a blob without an etag only: validate never hashes one (start-up)
    return etag_name(etag) or hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def _temp_beside(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")


def _write_atomic(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = _temp_beside(path)
    try:
        temp.write_bytes(content)
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class HubCache:
    """The standard Hugging Face hub cache folder, read and written as huggingface_hub does."""

    __repr__ = fields_repr

    root: Path
    symlinks: bool = True  # False with HF_HUB_DISABLE_SYMLINKS=1: snapshots hold copies

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] = os.environ) -> HubCache:
        return cls(hub_cache_root(environ), symlinks=not is_true(environ.get("HF_HUB_DISABLE_SYMLINKS")))

    def repo_dir(self, repo: str) -> Path:
        return self.root / "--".join(["models", *repo.split("/")])

    # --- reading -------------------------------------------------------------------------------------------
    def ref(self, repo: str, revision: str) -> str | None:
        """The commit a branch or tag pointed at when last cached, or None."""
        try:
            commit = read_text_file(self.repo_dir(repo) / "refs" / revision, MAX_KEY_FILE_BYTES).strip()
        except ValueError:  # missing, not a regular file, or not text: not cached
            return None
        return commit if is_commit(commit) else None

    def lookup(self, repo: str, commit: str, filename: str) -> Path | KnownMissing | None:
        """The cached file at a commit, MISSING when the cache knows it does not exist, None when unknown."""
        base = self.repo_dir(repo)
        if (base / ".no_exist" / commit / filename).is_file():
            return MISSING
        pointer = base / "snapshots" / commit / filename
        return pointer if pointer.is_file() else None  # a dangling symlink (blob removed) is unknown

    # --- writing (each returns quietly when the cache cannot be written) --------------------------------------
    def write_ref(self, repo: str, revision: str, commit: str) -> None:
        if is_commit(revision) or self.ref(repo, revision) == commit:
            return
        with contextlib.suppress(OSError):
            _write_atomic(self.repo_dir(repo) / "refs" / revision, commit.encode())

    def mark_missing(self, repo: str, commit: str, filename: str) -> None:
        marker = self.repo_dir(repo) / ".no_exist" / commit / filename
        with contextlib.suppress(OSError):
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()

    def store(self, repo: str, commit: str, filename: str, blob: str, content: bytes) -> Path | None:
        """Write the blob (unless already there) and point the snapshot at it; the snapshot path, or None."""
        path = self.repo_dir(repo) / "blobs" / blob
        try:
            if not path.is_file():
                _write_atomic(path, content)
        except OSError:
            return None
        return self.link(repo, commit, filename, blob)

    def link(self, repo: str, commit: str, filename: str, blob: str) -> Path | None:
        """Point snapshots/{commit}/{filename} at an existing blob; the snapshot path, or None (no such blob,
        or the cache cannot be written)."""
        base = self.repo_dir(repo)
        source = base / "blobs" / blob
        pointer = base / "snapshots" / commit / filename
        if not source.is_file():
            return None
        try:
            pointer.parent.mkdir(parents=True, exist_ok=True)
            temp = _temp_beside(pointer)
            try:
                if not self._symlink(source, temp):
                    import shutil  # ~33 M instructions to import, paid only when a file is copied into the cache
                    shutil.copyfile(source, temp)
                os.replace(temp, pointer)  # replaces a stale pointer of an earlier run in one step
            finally:
                temp.unlink(missing_ok=True)
        except OSError:
            return None
        return pointer

    def _symlink(self, source: Path, link: Path) -> bool:
        if not self.symlinks:
            return False
        try:
            os.symlink(os.path.relpath(source, link.parent), link)
        except (OSError, NotImplementedError):  # Windows without the privilege, some network filesystems
            return False
        return True
