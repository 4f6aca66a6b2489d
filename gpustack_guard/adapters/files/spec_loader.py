"""Reading spec files from disk (the I/O edge of the spec pipeline)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from gpustack_guard.adapters.files.overlays import OVERLAYS_FOLDER, OverlaidDocument
from gpustack_guard.adapters.files.regular_file import TooLarge, Unreadable, path_problem, read_regular, reason
from gpustack_guard.adapters.files.yaml_documents import load_documents
from gpustack_guard.adapters.files.yaml_positions import (
    MAX_SPEC_ITEMS,
    LocatedDocument,
    YamlInputLimit,
    YamlSyntaxError,
    scalar_spans,
)
from gpustack_guard.core import echo
from gpustack_guard.core import findings as F
from gpustack_guard.core.deploy.removals import DELETE, DIRECTIVE, DIRECTIVES, EXCLUDE, NO_REMOVALS, OverlayRemovals
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.ports import LocatedData
from gpustack_guard.core.rules import documents as D
from gpustack_guard.core.spec.check import KEY_FIX, YAML11_FIX, SpecDoc, key_reading, yaml11_reading

if TYPE_CHECKING:  # core.suppressions loads the rule registry: imported when comments are asked for
    from gpustack_guard.core.suppressions import InlineSuppression

# A run's `# gsg: ignore[...]` comments by displayed file, scanned from the text the loader read anyway (reading
# every spec file again for them cost ~170 ms at 10,000 specs); a file that could not be read has none.
Comments = dict[str, list["InlineSuppression"]]

SPEC_SUFFIXES = (".yaml", ".yml")
PROJECT_FILES = ("gsg.yaml", "gsg.yml")  # a spec tree's project identity (spec/project.py), never a spec

# File sizes, checked before a byte is parsed (the other limits: yaml_positions.py).
MAX_SPEC_BYTES = 16 << 20  # 16 MiB: a spec is ~150 bytes to 2 KB; one file of 50,000 parked (replicas: 0) specs
#                             is ~7 MB and validates in ~10 s at ~460 MB RSS, so 16 MiB stays within a CI runner
MAX_SETTINGS_BYTES = 32 << 20  # 32 MiB for fleet snapshots (and workload, contexts, project files): a snapshot
#                                is ~100 bytes per GPU and instance, so 32 MiB holds a 100,000-GPU fleet and still
#                                parses in seconds; gsg snapshot of a real cluster is well below 1 MiB

_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_UTF32_BOMS = (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")


def display_path(path: Path | str, cwd: str | None = None) -> str:
    """Paths relative to the working directory when inside it (stable in CI annotations and SARIF); others as
    given. Plain string work: os.path.relpath costs two abspath calls per file. `cwd`: the working directory
    when the caller already asked for it (one getcwd per spec tree, not per file)."""
    text = os.path.normpath(str(path))
    if os.path.isabs(text):
        cwd = cwd or os.getcwd()
        if text.startswith(cwd + os.sep):
            return text[len(cwd) + 1:]
    return text


def _walk(root: str, unreadable: list[tuple[str, str]] | None = None, links: list[str] | None = None) -> list[str]:
    """Spec files below `root`, sorted, skipping hidden files and folders and overlays/ (patches, applied only
    when asked for: overlays.py). os.walk: pathlib is slow here. A folder that cannot be listed, and a symbolic
    link (to a folder or a spec file) that leads outside the tree, is added to `unreadable` (path, message),
    never skipped silently or read: a pull request's link to ~/.ssh or /etc would be echoed in findings. Links
    to folders inside the tree are not followed (their files are read where they are; no loops)."""
    found: list[str] = []
    inside = os.path.realpath(root).rstrip(os.sep) + os.sep

    def tell(path: str, message: str) -> None:
        if unreadable is not None:
            unreadable.append((path, message))

    def leads_outside(path: str) -> bool:
        return not (os.path.realpath(path) + os.sep).startswith(inside)

    def listing_failed(exc: OSError) -> None:
        tell(exc.filename or root, f"folder cannot be read: {reason(exc)}; its spec files are not checked")

    for folder, dirs, names in os.walk(root, onerror=listing_failed):
        kept = []
        for name in sorted(dirs):
            if name.startswith(".") or name == OVERLAYS_FOLDER:
                continue
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                kept.append(name)
            elif leads_outside(path):
                tell(path, f"{_LINK_OUT} folder outside {display_path(root)}: not read")
        dirs[:] = kept
        for name in names:  # any letter case: Specs.YAML is a spec too
            if name.lower().endswith(SPEC_SUFFIXES) and not name.startswith(".") and name.lower() not in PROJECT_FILES:
                path = os.path.join(folder, name)
                if not os.path.islink(path):
                    found.append(path)
                elif leads_outside(path):
                    tell(path, f"{_LINK_OUT} file outside {display_path(root)}: not read")
                else:
                    found.append(path)
                    if links is not None:
                        links.append(path)
    return sorted(found)  # paths as text: a Path per file was ~3.4 us of 10,000 (issue 34 tenth round)


_LINK_OUT = "a symbolic link to a"


def spec_files(paths: list[str], *, allow_empty: bool = False,
               unreadable: list[tuple[str, str]] | None = None) -> list[str]:
    """The spec files of these paths; folders that cannot be listed go to `unreadable`. A path given that is not
    a regular file (a broken link, a FIFO) is kept, so reading it reports why."""
    files: list[str] = []
    links: list[str] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(_walk(raw, unreadable, links))
        elif os.path.lexists(raw):  # a file, or a FIFO, device or broken link: reading it says which (GSG019)
            if path.name.lower() not in PROJECT_FILES:
                files.append(str(path))  # as pathlib reads it (`a.yaml/` is `a.yaml`), as before
        else:
            raise GsgError("no such file or directory", where=raw)
    if not files and not unreadable and not allow_empty:
        raise GsgError("no spec files (*.yaml, *.yml) found", where=", ".join(paths))
    # one folder without links lists each file once: the stat per file is paid only where a file can come twice
    return _each_file_once(files) if len(paths) > 1 or links else files


def _each_file_once(files: list[str]) -> list[str]:
    """`files` with each file once, at the first path that reaches it: a folder and a file in it given together
    (`gsg validate specs specs/a.yaml`, as a pre-commit hook may pass them), a path given twice, or a link in the
    tree to a spec beside it. Each was read again and called a duplicate of itself (GSG005 'already declared at'
    its own line), and its GPUs were booked twice."""
    seen: set[tuple] = set()
    kept = []
    for path in files:
        try:
            status = os.stat(path)
            identity: tuple = (status.st_dev, status.st_ino)
        except OSError:  # a broken link or a loop: reading it says why (GSG019), once per path
            identity = ("path", os.path.abspath(path))
        if identity not in seen:
            seen.add(identity)
            kept.append(path)
    return kept


def read_bytes(path: Path | str, max_bytes: int) -> bytes:
    """The file's bytes; Unreadable for what is not a readable regular file (a FIFO, a device, a socket, a
    folder: regular_file.py), YamlInputLimit past `max_bytes` (checked before reading)."""
    try:
        return read_regular(path, max_bytes)
    except TooLarge as exc:
        raise YamlInputLimit(f"file of {exc.size:,} bytes (limit {exc.limit:,}): checked before parsing", 1, 1
                             ) from None


def _wide_encoding(data: bytes) -> str | None:
    """UTF-16 or UTF-32, by the byte-order mark or, without one, by the zero bytes of an ASCII first character (the
    detection of YAML 1.2 section 5.2): a UTF-32 mark starts with UTF-16's, so it is asked first."""
    if data.startswith(_UTF32_BOMS):
        return "UTF-32 text (it starts with a UTF-32 byte-order mark)"
    if data.startswith(_UTF16_BOMS):
        return "UTF-16 text (it starts with a UTF-16 byte-order mark)"
    head = data[:4]
    if len(head) < 4 or 0 not in head:
        return None
    if head[:3] == b"\0\0\0" or head[1:] == b"\0\0\0":
        return "UTF-32 text (no byte-order mark: three zero bytes to each ASCII character)"
    if head[0] == head[2] == 0 or head[1] == head[3] == 0:
        return "UTF-16 text (no byte-order mark: a zero byte to each ASCII character)"
    return None


def decode(data: bytes) -> str:
    """UTF-8, with or without a byte-order mark; anything else (UTF-16, Latin-1) is Unreadable at its line."""
    wide = _wide_encoding(data)
    if wide:
        raise Unreadable(f"{wide}: save it as UTF-8")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise Unreadable(f"not UTF-8 text: byte 0x{data[exc.start]:02X} at line {line} (save the file as UTF-8)",
                         line) from None


def read_text(path: Path, max_bytes: int = MAX_SETTINGS_BYTES) -> str:
    """A settings file's text (bounded, UTF-8); what cannot be read is one GsgError naming the path."""
    shown = display_path(path)
    try:
        return decode(read_bytes(path, max_bytes))
    except Unreadable as exc:
        raise GsgError(str(exc), where=shown) from None
    except YamlInputLimit as exc:
        raise GsgError(str(exc), where=f"{shown}:1") from None


def _stopped(shown: str, exc: Unreadable | YamlSyntaxError) -> F.Finding:
    if isinstance(exc, Unreadable):
        return F.finding(D.UNREADABLE_FILE, F.Location(shown, exc.line, 1), f"cannot be read: {exc}",
                         fix="fix the permission, save the file as UTF-8, or repair or remove the link")
    rule = D.INPUT_LIMIT if isinstance(exc, YamlInputLimit) else D.YAML_SYNTAX
    return F.finding(rule, F.Location(shown, exc.line, exc.column), str(exc))


def _read_spec(path: Path | str, shown: str, comments: Comments | None = None
               ) -> tuple[list[LocatedDocument], F.Finding | None]:
    """One spec file's documents, or the finding that stops it: GSG019 unreadable, GSG017 beyond a limit, GSG001
    not YAML, GSG018 no document at all."""
    if comments is not None:
        comments[shown] = []  # until its text is read
    try:
        data = read_bytes(path, MAX_SPEC_BYTES)
    except (Unreadable, YamlInputLimit) as exc:
        return [], _stopped(shown, exc)
    return spec_documents(data, shown, comments)


def suppression_comments(shown: str, text: str) -> list[InlineSuppression]:
    """A file's `# gsg: ignore` comments: only real YAML comments, not a `#` inside a quoted or block scalar."""
    from gpustack_guard.core.suppressions import scan

    return scan(shown, text, scalar_spans(text) if "gsg:" in text else ())


def spec_documents(data: bytes, shown: str, comments: Comments | None = None
                   ) -> tuple[list[LocatedDocument], F.Finding | None]:
    """A spec file's bytes as documents, or the one finding that stops them (no I/O: the fuzz test's entry).
    With `comments`, the file's suppression comments go there too (those of a file that is not YAML included)."""
    try:
        text = decode(data)
        if comments is not None:
            comments[shown] = suppression_comments(shown, text)
        located = load_documents(text, max_items=MAX_SPEC_ITEMS)
    except (Unreadable, YamlSyntaxError) as exc:  # YamlInputLimit is a YamlSyntaxError
        return [], _stopped(shown, exc)
    if not located:
        return [], F.finding(D.EMPTY_SPEC, F.Location(shown, 1, 1),
                             "no document in this file (empty, only comments or only `---`)",
                             fix="restore the spec, or delete the file if the deployment is meant to go")
    return located, None


def _read_docs(files: list[str], docs: list[SpecDoc], problems: list[F.Finding],
               comments: Comments | None = None) -> None:
    cwd = os.getcwd()  # once per tree: a getcwd per absolute path was ~3 us a file (docs/performance.md, round 6)
    folders: dict[str, str] = {}
    for path in files:
        shown = _shown_in_folder(path, cwd, folders)  # once per file
        located, problem = _read_spec(path, shown, comments)
        if problem is not None:
            problems.append(problem)
        docs.extend(SpecDoc(shown, i, doc) for i, doc in enumerate(located))


def _shown_in_folder(text: str, cwd: str, folders: dict[str, str]) -> str:
    """display_path(text, cwd), its folder part worked out once per folder: os.path.normpath per file was ~3 us
    of ~5 (10,000 files, issue 34 tenth round). normpath and the working-directory prefix treat a plain last name
    (no separator, not `.` or `..`) alike whatever it is, so the folder's display with the name `x` ends in `x`
    and the name takes its place."""
    folder, sep, name = text.rpartition(os.sep)
    if not folder or name in ("", ".", "..") or os.altsep:
        return display_path(text, cwd)
    shown = folders.get(folder)
    if shown is None:
        shown = folders[folder] = display_path(folder + sep + "x", cwd)[:-1]
    return shown + name


def _unreadable_folders(unreadable: list[tuple[str, str]], problems: list[F.Finding]) -> None:
    for path, message in unreadable:
        fix = ("move the specs into the tree, or validate the link's target as its own path"
               if message.startswith(_LINK_OUT) else "give gsg read permission, or remove it")
        problems.append(F.finding(D.UNREADABLE_FILE, F.Location(display_path(path)), message, fix=fix))


def read_yaml_file(path: Path, missing: str, max_bytes: int = MAX_SETTINGS_BYTES) -> list:
    """The located documents of a YAML (or JSON) settings file; a missing file or bad YAML is one GsgError
    naming file:line:column. `missing` says what the file is, for the not-found line."""
    shown = display_path(path)
    if not os.path.lexists(path):  # anything else there (a FIFO, a folder) is read_text's one line
        raise GsgError(missing, where=shown)
    try:
        docs = load_documents(read_text(path, max_bytes))  # JSON is YAML, so one parser gives positions for both
    except YamlSyntaxError as exc:
        raise GsgError(str(exc), where=f"{shown}:{exc.line}:{exc.column}") from None
    refuse_duplicate_keys(docs, shown)
    refuse_yaml11_numbers(docs, shown)
    refuse_non_text_keys(docs, shown)
    return docs


def refuse_duplicate_keys(docs: Sequence[LocatedData], shown: str) -> None:
    """A settings file's repeated key is an error, as a spec's is (GSG001 there): YAML keeps only the last, so a
    snapshot's second `total:` or a context's second `server:` would silently replace the first. A key that
    overrides one brought in by `<<: *anchor` is plain YAML and passes (the loader counts only own keys)."""
    for doc in docs:
        if doc.duplicate_keys:
            path, line, column = doc.duplicate_keys[0]
            raise GsgError(f"key '{echo.value('.'.join(map(str, path)))}' appears twice; YAML keeps only the last "
                           "(remove one of them)", where=f"{shown}:{line}:{column}")


def refuse_yaml11_numbers(docs: Sequence[LocatedData], shown: str) -> None:
    """A settings file's unquoted number that YAML 1.1 reads otherwise than YAML 1.2 is an error, as a spec's is
    (GSG002 there): a snapshot's `total: 1:20` was 80 bytes, a workload's `concurrency: 010` 8 and a context's
    `timeout: 1:30` 90 seconds, each silently, where the editor that checked the file read the text or 10."""
    for doc in docs:
        for path, text, value in getattr(doc, "yaml11_numbers", ()):
            line, column = doc.position(path)
            raise GsgError(f"{yaml11_reading(path, text, value, 'gsg reads')} ({YAML11_FIX})",
                           where=f"{shown}:{line}:{column}")


# What the keys of a settings file's mapping name, by the mapping's own key (a field name elsewhere)
_KEY_NOUNS = {"claims": "a GPU index", "contexts": "a context name", "labels": "a label name",
              "per_path_ignores": "a path glob"}
# Mappings whose keys are numbers: a fleet instance's claims are bytes by GPU index (`claims: {3: 8GiB}`)
_NUMBERED = ("claims",)


def refuse_non_text_keys(docs: Sequence[LocatedData], shown: str) -> None:
    """A settings file's key that YAML read as a boolean, number, null or date is an error at the key, as a spec's
    is (GSG002 there): `yes:` in a fleet said "'1': Keys should be strings" at the value, a project file's
    "unknown field 'True'", and a contexts file's top-level `yes: 1` was silently ignored. A GPU index of a
    fleet's claims is a number, not a boolean (`yes:` would have been GPU 1)."""
    for doc in docs:
        for parent, key, text in getattr(doc, "non_text_keys", ()):
            if parent and parent[-1] in _NUMBERED and type(key) is int:
                continue
            line, column = doc.position((*parent, key), key=True)
            noun = _KEY_NOUNS.get(parent[-1], "a field name") if parent else "a field name"
            raise GsgError(f"{key_reading(parent, key, text, noun)} ({KEY_FIX})", where=f"{shown}:{line}:{column}")


def load_specs(paths: list[str], *, allow_empty: bool = False, overlay: str | None = None,
               comments: Comments | None = None) -> tuple[list[SpecDoc], list[F.Finding]]:
    """The documents of every spec file under `paths` and the findings that stopped files; with `comments`, each
    file read (overlay patches too) and its suppression comments, for suppressions.accept."""
    docs, problems, _ = load_context_specs(paths, allow_empty=allow_empty, overlay=overlay, comments=comments)
    return docs, problems


def load_context_specs(paths: list[str], *, allow_empty: bool = False, overlay: str | None = None,
                       comments: Comments | None = None
                       ) -> tuple[list[SpecDoc], list[F.Finding], OverlayRemovals]:
    """The specs as one context sees them: with its overlay's patches and added specs, without the names it
    excludes or deletes (those come back as OverlayRemovals, for plan and drift)."""
    docs: list[SpecDoc] = []
    problems: list[F.Finding] = []
    unreadable: list[tuple[str, str]] = []
    files = spec_files(paths, allow_empty=allow_empty, unreadable=unreadable)
    _unreadable_folders(unreadable, problems)
    _read_docs(files, docs, problems, comments)
    if not overlay:
        return docs, problems, NO_REMOVALS
    return _apply_overlay(docs, paths, overlay, problems, comments)


def _directive(patch: SpecDoc, where: str) -> str | None:
    """`$patch: delete|exclude` of an overlay document (None: a patch or an added spec); such a document holds
    only `name:` beside it, since nothing else of it could take effect."""
    raw = patch.raw
    if DIRECTIVE not in raw:
        return None
    value = raw[DIRECTIVE]
    line, column = patch.located.position((DIRECTIVE,))
    if value not in DIRECTIVES:
        raise GsgError(f"`{DIRECTIVE}: {str(value)[:40]}` is not an overlay directive: `{DIRECTIVE}: delete` (this "
                       f"context wants the deployment gone) or `{DIRECTIVE}: exclude` (not managed here)",
                       where=f"{patch.file}:{line}:{column}")
    extra = [k for k in raw if k not in ("name", DIRECTIVE)]
    if extra:
        line, column = patch.located.position((extra[0],), key=True)
        if not isinstance(extra[0], str):  # `yes:` said 'True' would have no effect
            plain_text = getattr(patch.located, "plain_text", None)
            text = plain_text((extra[0],), key=True) if plain_text else None
            raise GsgError(f"{key_reading((), extra[0], text)} ({KEY_FIX})", where=f"{patch.file}:{line}:{column}")
        raise GsgError(f"`{DIRECTIVE}: {value}` takes only `name:`; '{str(extra[0])[:80]}' would have no effect",
                       where=f"{patch.file}:{line}:{column}")
    return str(value)


def _apply_overlay(docs: list[SpecDoc], paths: list[str], name: str, problems: list[F.Finding],
                   comments: Comments | None = None
                   ) -> tuple[list[SpecDoc], list[F.Finding], OverlayRemovals]:
    problem = path_problem(name)
    if problem is not None:  # --overlay, GSG_OVERLAY or a context's overlay (its own line there, contexts.py)
        raise GsgError(f"overlay '{name[:80]}' is not a folder name: {problem}")
    folders = [Path(p) / OVERLAYS_FOLDER / name for p in paths if Path(p).is_dir()]
    present = [f for f in folders if f.is_dir()]
    if not present:
        raise GsgError(f"overlay '{name}' not found", where=", ".join(display_path(f) for f in folders) or
                       "(overlays live in a spec folder: SPECS/overlays/NAME)")
    patches: list[SpecDoc] = []
    unreadable: list[tuple[str, str]] = []
    _read_docs([f for folder in present for f in _walk(str(folder), unreadable)], patches, problems, comments)
    _unreadable_folders(unreadable, problems)
    by_name: dict[str, SpecDoc] = {}
    for patch in patches:
        where = f"{patch.file}:{patch.located.start_line}"
        if patch.name is None:
            raise GsgError("an overlay document needs the `name:` of the spec it patches", where=where)
        if patch.name in by_name:
            other = by_name[patch.name]
            raise GsgError(f"'{echo.spec_name(patch.name)}' is patched twice (also at {other.file}:"
                           f"{other.located.start_line})", where=where)
        by_name[patch.name] = patch
    declared = {d.name for d in docs}
    added: list[SpecDoc] = []
    removed: dict[str, dict[str, str]] = {directive: {} for directive in DIRECTIVES}
    for patch_name, patch in by_name.items():
        where = f"{patch.file}:{patch.located.start_line}"
        if patch_name in declared:
            # a patch is merged, never checked as a spec of its own: its repeated key (`replicas:` twice, or
            # `$patch: exclude` then `$patch: delete`) was silently the last one
            refuse_duplicate_keys([patch.located], patch.file)
        directive = _directive(patch, where)
        if patch_name in declared:
            if directive is not None:
                removed[directive][patch_name] = where
            continue
        if directive is not None:
            verb = "deletes" if directive == DELETE else "excludes"
            raise GsgError(f"overlay '{name}' {verb} '{echo.spec_name(patch_name)}', which no spec declares",
                           where=where)
        if "source" not in patch.raw:
            raise GsgError(f"overlay '{name}' patches '{echo.spec_name(patch_name)}', which no spec declares (a "
                           "deployment only this context has is a whole spec, with `source:`)", where=where)
        added.append(patch)  # a spec of its own, read and checked like any other
    gone = {n for names in removed.values() for n in names}
    merged = [SpecDoc(d.file, d.index, OverlaidDocument(d.located, by_name[d.name].located, by_name[d.name].file))
              if d.name in by_name else d for d in docs if d.name not in gone]
    return merged + added, problems, OverlayRemovals(name, removed[EXCLUDE], removed[DELETE])
