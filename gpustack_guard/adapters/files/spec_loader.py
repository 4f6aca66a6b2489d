"""Reading spec files from disk (the I/O edge of the spec pipeline)."""

from __future__ import annotations

import os
from pathlib import Path

from gpustack_guard.adapters.files.overlays import OVERLAYS_FOLDER, OverlaidDocument
from gpustack_guard.adapters.files.yaml_positions import YamlSyntaxError, load_documents
from gpustack_guard.core import findings as F
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.rules import documents as D
from gpustack_guard.core.spec.check import SpecDoc

SPEC_SUFFIXES = (".yaml", ".yml")
PROJECT_FILES = ("gsg.yaml", "gsg.yml")  # a spec tree's project identity (spec/project.py), never a spec


def display_path(path: Path | str) -> str:
    """Paths relative to the working directory when inside it (stable in CI annotations and SARIF); others as
    given. Plain string work: os.path.relpath costs two abspath calls per file."""
    text = os.path.normpath(str(path))
    if os.path.isabs(text):
        cwd = os.getcwd()
        if text.startswith(cwd + os.sep):
            return text[len(cwd) + 1:]
    return text


def _walk(root: str) -> list[Path]:
    """Spec files below `root`, sorted, skipping hidden files and folders and overlays/ (patches, applied only
    when asked for: overlays.py). os.walk: pathlib is slow here."""
    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != OVERLAYS_FOLDER)
        found.extend(os.path.join(folder, n) for n in names
                     if n.endswith(SPEC_SUFFIXES) and not n.startswith(".") and n not in PROJECT_FILES)
    return [Path(f) for f in sorted(found)]


def spec_files(paths: list[str], *, allow_empty: bool = False) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(_walk(raw))
        elif path.is_file():
            if path.name not in PROJECT_FILES:
                files.append(path)
        else:
            raise GsgError("no such file or directory", where=raw)
    if not files and not allow_empty:
        raise GsgError("no spec files (*.yaml, *.yml) found", where=", ".join(paths))
    return files


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise GsgError("not UTF-8 text", where=display_path(path)) from None
    except OSError as exc:
        raise GsgError(exc.strerror or "cannot be read", where=display_path(path)) from None


def _read_docs(files: list[Path], docs: list[SpecDoc], problems: list[F.Finding]) -> None:
    for path in files:
        shown = display_path(path)
        try:
            located = load_documents(read_text(path))
        except YamlSyntaxError as exc:
            problems.append(F.finding(D.YAML_SYNTAX, F.Location(shown, exc.line, exc.column), str(exc)))
            continue
        docs.extend(SpecDoc(shown, i, doc) for i, doc in enumerate(located))


def read_yaml_file(path: Path, missing: str) -> list:
    """The located documents of a YAML (or JSON) settings file; a missing file or bad YAML is one GsgError
    naming file:line:column. `missing` says what the file is, for the not-found line."""
    shown = display_path(path)
    if not path.is_file():
        raise GsgError(missing, where=shown)
    try:
        return load_documents(read_text(path))  # JSON is YAML, so one parser gives positions for both
    except YamlSyntaxError as exc:
        raise GsgError(str(exc), where=f"{shown}:{exc.line}:{exc.column}") from None


def load_specs(paths: list[str], *, allow_empty: bool = False,
               overlay: str | None = None) -> tuple[list[SpecDoc], list[F.Finding]]:
    docs: list[SpecDoc] = []
    problems: list[F.Finding] = []
    _read_docs(spec_files(paths, allow_empty=allow_empty), docs, problems)
    if overlay:
        docs = _apply_overlay(docs, paths, overlay, problems)
    return docs, problems


def _apply_overlay(docs: list[SpecDoc], paths: list[str], name: str, problems: list[F.Finding]) -> list[SpecDoc]:
    folders = [Path(p) / OVERLAYS_FOLDER / name for p in paths if Path(p).is_dir()]
    present = [f for f in folders if f.is_dir()]
    if not present:
        raise GsgError(f"overlay '{name}' not found", where=", ".join(display_path(f) for f in folders) or
                       "(overlays live in a spec folder: SPECS/overlays/NAME)")
    patches: list[SpecDoc] = []
    _read_docs([f for folder in present for f in _walk(str(folder))], patches, problems)
    by_name: dict[str, SpecDoc] = {}
    for patch in patches:
        where = f"{patch.file}:{patch.located.start_line}"
        if patch.name is None:
            raise GsgError("an overlay document needs the `name:` of the spec it patches", where=where)
        if patch.name in by_name:
            raise GsgError(f"'{patch.name}' is patched twice (also at {by_name[patch.name].file})", where=where)
        by_name[patch.name] = patch
    declared = {d.name for d in docs}
    for patch_name, patch in by_name.items():
        if patch_name not in declared:
            raise GsgError(f"overlay '{name}' patches '{patch_name}', which no spec declares",
                           where=f"{patch.file}:{patch.located.start_line}")
    return [SpecDoc(d.file, d.index, OverlaidDocument(d.located, by_name[d.name].located, by_name[d.name].file))
            if d.name in by_name else d for d in docs]
