"""Opening the files gsg reads: regular files only, their size known before a byte is read.

Any path gsg reads can be something else in a pull request or a careless setup: a FIFO (opening it blocks until
a writer comes, forever), /dev/zero or /dev/urandom (endless), a socket, a folder, or a sparse file that claims
terabytes. Each opener here opens without blocking (O_NONBLOCK: a FIFO opens at once), asks the open descriptor
what it is (no window between a check and the open for the path to be swapped), and refuses anything but a
regular file, and any file over the caller's size limit, before reading. Every file gsg reads goes through here:
specs and settings (spec_loader), config.json and safetensors indexes, GGUF headers, API key and token files,
templates, hub cache entries.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any, BinaryIO

# Size limits of files that are not YAML (spec_loader.py has those of specs and settings files).
MAX_CONFIG_BYTES = 8 << 20  # 8 MiB: a model's config.json is 1-100 KB (per-layer lists included)
MAX_INDEX_BYTES = 64 << 20  # 64 MiB: model.safetensors.index.json names every tensor (a few MB for the largest)
MAX_KEY_FILE_BYTES = 64 << 10  # 64 KiB: an API key or a token is under 200 bytes
MAX_TEMPLATE_BYTES = 1 << 20  # 1 MiB: a guard template is 1-5 KB
MAX_JSON_DEPTH = 64  # nested objects/arrays: config.json nests 3-4 deep (text_config.rope_scaling.factor)
MAX_PATH_BYTES = 4_095  # PATH_MAX on Linux (4,096 with the C string's final NUL)
MAX_NAME_BYTES = 255  # NAME_MAX: one file or folder name of a path

_O_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


class Unreadable(Exception):
    """A path that cannot be read as a regular file, or (from spec_loader.decode) as UTF-8 text: the reason,
    one line (GSG019 in a spec tree), and the line of the first byte that is not UTF-8 when there is one."""

    def __init__(self, reason: str, line: int = 1):
        self.line = line
        super().__init__(reason)


class TooLarge(Exception):
    """A regular file over the caller's size limit (checked before reading)."""

    def __init__(self, size: int, limit: int):
        self.size, self.limit = size, limit
        super().__init__(f"file of {size:,} bytes (limit {limit:,}): checked before reading")


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, for the one-line reason."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"  # pragma: no cover - doors and the like: no such file on Linux or macOS


def reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "symbolic link loop"
    if exc.errno == errno.EACCES:
        return "permission denied"
    if exc.errno == errno.ENXIO:  # opening a socket
        return "not a regular file (a socket)"
    if exc.errno == errno.ENAMETOOLONG:
        return "path too long for the operating system"
    return (exc.strerror or "cannot be read").lower()


def path_problem(value: str | Path) -> str | None:
    """Why a path (typed in a file, a flag or a variable) cannot name any file here, before the operating system
    is asked: Python raises ValueError for a NUL, UnicodeEncodeError for a lone surrogate and OSError for a name
    past NAME_MAX, none of which is a one-line reason. None: the path can be tried."""
    text = str(value)
    if len(text) <= MAX_NAME_BYTES and text.isascii() and "\x00" not in text:
        return None  # no name in it can be too long, nor the whole: once per spec file, ~1 us (issue 34 tenth round)
    if "\x00" in text:
        return "the path holds a NUL character"
    try:
        encoded = os.fsencode(text)
    except UnicodeEncodeError:
        return "the path holds a character no file name can (a lone UTF-16 surrogate)"
    if len(encoded) > MAX_PATH_BYTES:
        return f"the path is {len(encoded):,} bytes long (at most {MAX_PATH_BYTES:,})"
    longest = max(len(part) for part in encoded.split(b"/"))
    if longest > MAX_NAME_BYTES:
        return f"a name in the path is {longest:,} bytes long (at most {MAX_NAME_BYTES})"
    return None


def _open_fd(path: str | Path) -> tuple[int, int]:
    """(descriptor, size) of a regular file opened for reading; Unreadable (one line) for a missing path, a broken
    link, or anything but a regular file. The caller closes the descriptor."""
    problem = path_problem(path)
    if problem is not None:
        raise Unreadable(problem)
    try:
        fd = os.open(path, _O_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ENOENT and os.path.islink(path):
            raise Unreadable(f"broken symbolic link (to {os.readlink(path)})") from None
        raise Unreadable(reason(exc)) from None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise Unreadable(f"not a regular file ({kind_of(status.st_mode)})")
        os.set_blocking(fd, True)
        return fd, status.st_size
    except BaseException:
        os.close(fd)
        raise


def open_regular(path: str | Path) -> BinaryIO:
    """The file opened for binary reading; Unreadable (one line) for a missing path, a broken link, or anything
    but a regular file. The caller closes it."""
    fd, _ = _open_fd(path)
    try:
        return os.fdopen(fd, "rb")
    except BaseException:  # pragma: no cover - fdopen of a descriptor just opened
        os.close(fd)
        raise


def read_regular(path: str | Path, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most `max_bytes`: Unreadable or TooLarge otherwise, before reading.
    Plain os.read on the descriptor: a buffered file object per file cost ~4 us of ~7 (10,000 spec files)."""
    fd, size = _open_fd(path)
    try:
        if size > max_bytes:
            raise TooLarge(size, max_bytes)
        try:
            # Up to one byte past the size (read(n) allocates n bytes first: never the whole limit); a file that
            # grew since fstat is read on in steps, to one byte past the limit.
            data = b""
            while len(data) <= max_bytes:
                wanted = size + 1 - len(data) if len(data) <= size else min(max_bytes + 1 - len(data), 1 << 20)
                chunk = os.read(fd, wanted)
                if not chunk:
                    break
                data += chunk
        except OSError as exc:
            raise Unreadable(reason(exc)) from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise TooLarge(len(data), max_bytes)
    return data


def read_text_file(path: str | Path, max_bytes: int) -> str:
    """A small text file (a key, a token, a template, a hub ref) as UTF-8: ValueError with a one-line reason."""
    try:
        return read_regular(path, max_bytes).decode("utf-8-sig")
    except (Unreadable, TooLarge) as exc:
        raise ValueError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte 0x{exc.object[exc.start]:02X} at offset {exc.start:,})") from None


def read_json(path: str | Path, max_bytes: int, shown: str) -> Any:
    """A JSON file (config.json, a safetensors index) within `max_bytes` and MAX_JSON_DEPTH: ValueError naming
    `shown` and the reason, one line, for anything else (never a RecursionError or a MemoryError)."""
    try:
        text = read_regular(path, max_bytes).decode("utf-8-sig")
    except (Unreadable, TooLarge) as exc:
        raise ValueError(f"{shown}: {exc}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{shown}: not UTF-8 text") from None
    return parse_json(text, shown)


class NotJson(ValueError):
    """parse_json's one-line reason, `shown` first; `reason` without it and `line` (None: the whole text) for a
    caller that names the place its own way (a dataset's record, file:line)."""

    def __init__(self, shown: str, reason: str, line: int | None = None):
        self.reason, self.line = reason, line
        super().__init__(f"{shown} is not JSON: {reason} (line {line})" if line is not None else f"{shown}: {reason}")


def parse_json(text: str, shown: str) -> Any:
    """JSON text within MAX_JSON_DEPTH and Python's digit limit: NotJson (a ValueError, one line) otherwise."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotJson(shown, exc.msg, exc.lineno) from None
    except RecursionError:  # json's C scanner recurses per level, ~1,000 deep
        raise NotJson(shown, f"nested more than {MAX_JSON_DEPTH} levels deep") from None
    except ValueError:  # a whole number past Python's digit limit for converting text (4,300 by default)
        raise NotJson(shown, f"a number of more than {sys.get_int_max_str_digits():,} digits") from None
    if json_depth(document) > MAX_JSON_DEPTH:
        raise NotJson(shown, f"nested more than {MAX_JSON_DEPTH} levels deep")
    return document


def json_depth(document: Any) -> int:
    """How deep objects and arrays nest (a scalar: 0), iteratively: no recursion however deep."""
    deepest = 0
    pending: list[tuple[Any, int]] = [(document, 0)]
    while pending:
        value, depth = pending.pop()
        if not isinstance(value, (dict, list)):
            continue
        children = value.values() if isinstance(value, dict) else value
        deepest = max(deepest, depth + 1)
        if deepest > MAX_JSON_DEPTH:
            return deepest
        pending.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest
