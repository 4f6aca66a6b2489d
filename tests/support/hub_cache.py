"""A Hugging Face hub cache as `huggingface-cli download` leaves it, built under a test's tmp_path."""

import hashlib
import os
from pathlib import Path


def git_sha(content: bytes) -> str:
    """The hub's ETag of a file kept in git: its git blob sha1."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def populate(root: Path, repo: str, commit: str, files: dict[str, bytes], ref: str | None = "main") -> Path:
    """refs/{ref} holding the commit, the files as blobs, relative symlinks to them in snapshots/{commit}/."""
    base = root / ("models--" + repo.replace("/", "--"))
    if ref:
        (base / "refs").mkdir(parents=True, exist_ok=True)
        (base / "refs" / ref).write_text(commit)
    for name, content in files.items():
        blob = base / "blobs" / git_sha(content)
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(content)
        link = base / "snapshots" / commit / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    return base
