"""Finding the project a spec tree belongs to (the I/O edge of ownership): `gsg.yaml` at the spec root, or
`--project` / `GSG_PROJECT`.

The project file is looked up from each spec path upwards, stopping at the repository root (a folder holding
`.git`), so a checkout never picks up a project file of the folder it happens to be cloned into.
"""

from __future__ import annotations

import os
from pathlib import Path

from gpustack_guard.adapters.files.spec_loader import PROJECT_FILES, display_path, read_text
from gpustack_guard.adapters.files.yaml_positions import YamlSyntaxError, load_documents
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.ownership import PROJECT_NAME, PROJECT_NAME_RULE, Identity

PRUNE_NEEDS_PROJECT = ("--prune needs a project identity, so that it never deletes another repository's "
                       "deployments: add a gsg.yaml with `project: NAME` at the spec root, or pass --project NAME "
                       "(GSG_PROJECT)")


def _start(path: str) -> str:
    absolute = os.path.abspath(path)
    return absolute if os.path.isdir(absolute) else os.path.dirname(absolute)


def _project_file_above(folder: str) -> str | None:
    while True:
        for name in PROJECT_FILES:
            candidate = os.path.join(folder, name)
            if os.path.lexists(candidate):  # a FIFO or folder named gsg.yaml is reported when read, not skipped
                return candidate
        parent = os.path.dirname(folder)
        if os.path.exists(os.path.join(folder, ".git")) or parent == folder:
            return None
        folder = parent


def _nested_project_files(folder: str, own: str | None) -> list[str]:
    found: list[str] = []
    for here, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found.extend(os.path.join(here, n) for n in names if n in PROJECT_FILES and os.path.join(here, n) != own)
    return sorted(found)


def check_name(name: str, where: str) -> str:
    if not isinstance(name, str) or not PROJECT_NAME.match(name):
        raise GsgError(f"project name {str(name)[:80]!r} is not valid: {PROJECT_NAME_RULE}", where=where)
    return name


def read_project_file(path: str) -> str:
    """The project name a gsg.yaml declares; every other key is an error (nothing is silently ignored)."""
    shown = display_path(path)
    try:
        docs = load_documents(read_text(Path(path)))
    except YamlSyntaxError as exc:
        raise GsgError(str(exc), where=f"{shown}:{exc.line}:{exc.column}") from None
    if len(docs) != 1 or not isinstance(docs[0].data, dict):
        raise GsgError("a project file is one mapping: `project: NAME`", where=shown)
    doc = docs[0]
    for key in doc.data:
        if key != "project":
            line, column = doc.position((key,), key=True)
            raise GsgError(f"unknown field '{key}' (a project file holds only `project:`)",
                           where=f"{shown}:{line}:{column}")
    if "project" not in doc.data:
        raise GsgError("missing `project: NAME`", where=f"{shown}:{doc.start_line}:1")
    line, column = doc.position(("project",))
    return check_name(doc.data["project"], f"{shown}:{line}:{column}")


def find_identity(spec_paths: list[str], project_option: str | None) -> Identity | None:
    """The project these spec paths belong to, or None when none is declared. All paths must agree."""
    starts = [_start(p) for p in spec_paths]
    files = sorted({f for f in (_project_file_above(s) for s in starts) if f})
    if len(files) > 1:
        raise GsgError("these specs belong to different project files (" + ", ".join(display_path(f) for f in files)
                       + "); plan and apply each project on its own")
    own = files[0] if files else None
    for start in {s for s, p in zip(starts, spec_paths) if os.path.isdir(os.path.abspath(p))}:
        nested = _nested_project_files(start, own)
        if nested:
            raise GsgError("a project file inside the spec tree declares a nested project; apply it on its own",
                           where=display_path(nested[0]))
    if own is not None:
        name = read_project_file(own)
        if project_option and project_option != name:
            raise GsgError(f"--project/GSG_PROJECT says '{project_option}' but {display_path(own)} declares "
                           f"'{name}'; drop the option or fix the file")
        return Identity(name, os.path.dirname(own), f"{display_path(own)}")
    if not project_option:
        return None
    name = check_name(project_option, "--project/GSG_PROJECT")
    root = os.path.commonpath(starts) if starts else os.getcwd()
    return Identity(name, root, "--project/GSG_PROJECT")


def recorded_path(identity: Identity | None, shown_file: str) -> str:
    """A spec file as its marker records it: relative to the project root (POSIX separators), so the same model
    is recorded the same from any working directory; without a project, the displayed path (legacy)."""
    if identity is None:
        return shown_file
    relative = os.path.relpath(os.path.abspath(shown_file), identity.root)
    return Path(relative).as_posix()


def covers_project(identity: Identity, spec_paths: list[str]) -> bool:
    """Whether this run reads the whole project (its root folder is one of the paths): only then can a model
    that no spec declares be told apart from one declared in a part of the tree that was not read."""
    return any(os.path.isdir(p) and os.path.abspath(p) == identity.root for p in spec_paths)
