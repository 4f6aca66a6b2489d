"""Where output goes: the report to stdout, summaries and errors to stderr, secrets scrubbed from both; files
written whole or not at all.

Every sink here is also the last line of defence against text gsg did not write: whatever a reporter forgot
to escape, no escape sequence, carriage return, backspace, C1 control or bidi override reaches a terminal or
a report file raw (core/echo.terminal_safe; newline and tab, gsg's own layout, stay)."""

from __future__ import annotations

import codecs
import contextlib
import os
import stat
import sys
from pathlib import Path
from typing import Callable

from gpustack_guard.core.echo import terminal_safe
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.secrets import is_secret_key, is_secret_value, scrub

_extra_secrets: list[str] = []
_quiet = False  # --quiet: progress and summaries off; errors and the report itself stay


def set_quiet(quiet: bool) -> None:
    global _quiet
    _quiet = quiet
CONNECTION_SECRETS = ("GSG_API_KEY",)  # never printed, not even with --show-secrets


def register_secret(value: str | None) -> None:
    """A secret gsg itself holds (the API key, a URL password): scrubbed from everything printed, always."""
    if value and value not in _extra_secrets:
        _extra_secrets.append(value)


def known_secrets(reveal: bool = False) -> list[str]:
    """Values to scrub from output: the registered ones, and (unless `reveal`, i.e. --show-secrets) every
    process environment value the broad rule calls a secret, by name or by value."""
    held = [os.environ[k] for k in CONNECTION_SECRETS if os.environ.get(k)]
    if reveal:
        return held + _extra_secrets
    env = [v for k, v in os.environ.items() if len(v) >= 6 and (is_secret_key(k) or is_secret_value(v))]
    return held + env + _extra_secrets


def safe_streams() -> None:
    """Let stdout and stderr write any character: one their encoding lacks (a homoglyph in a name, an icon in
    markdown, under LANG=C or PYTHONIOENCODING=ascii) is written as a backslash escape, never an internal error."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", "strict") == "strict":
            # a detached or closed stream refuses: _encodable below still covers it
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


# Encodings every ASCII text encodes in (the streams' usual ones), by codecs' own names; another is tried on the text.
_ENCODE_ALL_ASCII = frozenset({"utf-8", "ascii", "iso8859-1", "cp1252", "utf-16", "utf-32"})


def _holds_all_ascii(encoding: str) -> bool:
    try:
        return codecs.lookup(encoding).name in _ENCODE_ALL_ASCII  # any spelling: UTF8, utf_8, latin1, us-ascii
    except LookupError:
        return False


def _encodable(text: str, stream) -> str:
    """The text as `stream` can encode it: what its encoding lacks becomes a backslash escape (a stream that
    was not reconfigured, such as a test's capture, is covered here too)."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    if text.isascii() and _holds_all_ascii(encoding):  # isascii() is O(1)
        return text  # 0.09 s of encoding 100 MB only to find it encodes (validate -o json at 10,000 specs)
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return text.encode(encoding, "backslashreplace").decode(encoding)
    except LookupError:  # an encoding name Python does not know: leave the text to the stream
        return text
    return text


def out(text: str, secrets: list[str] | None = None, *, reveal: bool = False) -> None:
    # --show-secrets (reveal) shows the spec's own secrets, so token shapes stay too; gsg's own keys never do
    shown = scrub(text, known_secrets(reveal) + (secrets or []), shapes=not reveal)
    sys.stdout.write(_encodable(terminal_safe(shown), sys.stdout))
    sys.stdout.flush()


def err(text: str, secrets: list[str] | None = None) -> None:
    line = terminal_safe(scrub(text, known_secrets() + (secrets or []))).rstrip("\n") + "\n"
    sys.stderr.write(_encodable(line, sys.stderr))
    sys.stderr.flush()


_interrupt_told = False  # a command already said how it stopped on Ctrl-C/SIGTERM (the CLI then adds nothing)


def interrupted(text: str, secrets: list[str] | None = None) -> None:
    """A command's own account of an interruption: what it kept, what it wrote."""
    global _interrupt_told
    _interrupt_told = True
    err(text, secrets)


def interrupt_told() -> bool:
    return _interrupt_told


def new_run() -> None:
    """Forget the previous in-process run's interruption account (tests call the CLI many times)."""
    global _interrupt_told
    _interrupt_told = False


def note(text: str, secrets: list[str] | None = None) -> None:
    """A progress or summary line on stderr, which --quiet leaves out."""
    if not _quiet:
        err(text, secrets)


def written_form(text: str) -> str:
    """The text as `write_atomic` puts it in a file (compare with this to tell whether a file is current)."""
    return terminal_safe(text)


def would_change(path_text: str, text: str) -> bool:
    """Whether writing `text` (in its written form) to the path changes anything. Only a regular file is read (and
    only one of the right size): a folder, FIFO or device of that name is refused, never opened."""
    path = Path(path_text)
    if not os.path.lexists(path):
        return True
    if path.is_symlink() or not path.is_file():
        raise GsgError("exists and is not a regular file; refusing to replace it", where=path_text)
    data = text.encode("utf-8")
    if path.stat().st_size != len(data):
        return True
    return path.read_bytes() != data


def write_atomic(path_text: str, text: str) -> None:
    """Write via a temporary file and rename: an interrupted run never leaves half a file."""
    write_all_atomic([(path_text, text)])


def _mode_for(path: Path) -> int:
    """The replaced file's permissions, or a new file's as open() would give them: mkstemp's 0600 would otherwise
    turn a shared 0644 snapshot or a 0640 config into one only its writer reads."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mask = os.umask(0)  # the only way to read it; set back at once
        os.umask(mask)
        return 0o666 & ~mask


def write_all_atomic(files: list[tuple[str, str]]) -> None:
    """Write several files all or none: each goes to a temporary file beside its target first, and only when
    every one is written are they renamed into place, so a full disk or a refused path half way replaces
    nothing. (The renames themselves cannot run out of space.)"""
    for path_text, _ in files:  # before anything is staged: a refused target leaves every file as it was
        _check_target(path_text)
    staged: list[tuple[str, Path]] = []
    current = ""
    try:
        for path_text, text in files:
            current, path = path_text, Path(path_text)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise GsgError(f"cannot write: its folder cannot be made ({(exc.strerror or '').lower()}: a file "
                               "in the way?); nothing written", where=path_text) from None
            import tempfile  # on first write: validate writes no file and skips its import (start-up)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:100]}.", suffix=".tmp")
            staged.append((tmp, path))
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(written_form(text))
            os.chmod(tmp, _mode_for(path))
        for tmp, path in staged:
            current = str(path)
            os.replace(tmp, path)
    except BaseException as exc:
        for tmp, _ in staged:  # those already renamed no longer exist
            if os.path.exists(tmp):
                os.unlink(tmp)
        if isinstance(exc, OSError):  # a folder in the way, a full disk, no permission: one line naming the file
            raise GsgError(f"cannot write: {(exc.strerror or type(exc).__name__).lower()}; nothing written",
                           where=current) from None
        raise


def refuse_overwriting_inputs(targets: list[tuple[str, str]], inputs: list[str]) -> None:
    """Each (flag, path) to be written must not be a file the run read: `--report json=specs/a.yaml` or
    `render --out specs/a.yaml` replaced the spec with the report, and `--report sarif=fleet.yaml` the fleet."""
    read: dict[str, str] = {}
    for path in inputs:
        with contextlib.suppress(OSError, ValueError):
            read.setdefault(os.path.realpath(path), path)
    for flag, path in targets:
        try:
            same = read.get(os.path.realpath(path))
        except (OSError, ValueError):
            continue
        if same is not None:
            also = f" (as {same})" if same != path else ""
            raise GsgError(f"{flag} names a file this run reads{also}; refusing to overwrite it; nothing written",
                           where=path)


def refuse_replacing_unless(path: str | Path, ours: Callable[[str], bool], what: str, instead: str, *,
                            max_bytes: int, head_only: bool = False) -> None:
    """An output flag may replace an existing file only when `ours(text)` says gsg wrote it (an earlier plan,
    render, report, snapshot or soak): `--out README.md` replaced the readme, exit 0. The text is the file's first
    `max_bytes` with `head_only` (a format whose opening names gsg), else the whole file within `max_bytes` (a
    larger, unreadable or non-UTF-8 file is not ours). Nothing yet, or no regular file: the write says which."""
    if not os.path.isfile(path):
        return
    from gpustack_guard.adapters.files.regular_file import TooLarge, Unreadable, open_regular, read_regular

    try:
        if head_only:
            with open_regular(path) as handle:
                text = handle.read(max_bytes).decode("utf-8", "replace").removeprefix("\ufeff")
        else:
            text = read_regular(path, max_bytes).decode("utf-8-sig")
        mine = ours(text)
    except (Unreadable, TooLarge, UnicodeDecodeError, OSError, GsgError):
        mine = False
    if not mine:
        raise GsgError(f"exists and is not {what}; refusing to overwrite it (remove it or {instead}); nothing written",
                       where=str(path))


_NOT_REGULAR = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))


def _check_target(path_text: str) -> None:
    """An output path must be a regular file or nothing yet. The rename that makes writes atomic would otherwise
    put a regular file in place of a device (run as root, `--report json=/dev/full` replaced /dev/full) or a
    FIFO, and fail on a directory with a traceback."""
    try:
        mode = os.stat(path_text).st_mode  # through a link: /dev/stdout names the terminal or a pipe
    except OSError:
        return  # absent (or unreachable): the write itself says why it cannot be made
    for test, kind in _NOT_REGULAR:
        if test(mode):
            raise GsgError(f"is {kind}, not a regular file; gsg writes only regular files; nothing written",
                           where=path_text)
