"""Finding the project a spec tree belongs to (the I/O edge of ownership): `gsg.yaml` at the spec root, or
`--project` / `GSG_PROJECT`.

The project file is looked up from each spec path upwards, stopping at the repository root (a folder holding
`.git`), so a checkout never picks up a project file of the folder it happens to be cloned into.

    project: team-a                      # the ownership marker's project
    fleet: ../fleets/prod.yaml           # validate's fleet snapshot when none is given (relative to gsg.yaml)
    rendered: ../rendered/specs.yaml     # what `gsg render --check` compares when no --out is given
    select: [GSG0]                       # rule selection (core/suppressions.py)
    ignore: [GSG039]
    per_path_ignores: {"specs/batch/*": [GSG033]}

FIELDS below is the one list of what a project file holds: parsing and `gsg schema project` both read it.
"""

from __future__ import annotations

import os
import re
from dataclasses import field
from pathlib import Path

from gpustack_guard.adapters.files.regular_file import path_problem
from gpustack_guard.adapters.files.spec_loader import (
    PROJECT_FILES,
    display_path,
    read_text,
    refuse_duplicate_keys,
    refuse_non_text_keys,
    refuse_yaml11_numbers,
)
from gpustack_guard.adapters.files.yaml_documents import load_documents
from gpustack_guard.adapters.files.yaml_positions import YamlSyntaxError
from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.project_identity import PROJECT_NAME, PROJECT_NAME_RULE, Identity
from gpustack_guard.core.suppressions import RuleChoice, Selection
from gpustack_guard.core.values import frozen_value

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


# What a project file holds: key -> (kind, what it means). The kinds: a project name, a path relative to the
# file (inside the repository), a list of rule entries, a mapping of path globs to rule entries.
NAME, PATH, RULES, GLOBS = "name", "path", "rules", "globs"
FIELDS: dict[str, tuple[str, str]] = {
    "project": (NAME, "The project these specs belong to: recorded in every deployment gsg applies, so that "
                      "--prune deletes only this project's models."),
    "fleet": (PATH, "The fleet snapshot (`gsg snapshot`) validate checks against when neither --fleet nor the "
                    "context names one and no server is given; relative to this file, inside the repository."),
    "rendered": (PATH, "The committed rendered documents `gsg render --check` compares when no --out is given; "
                       "relative to this file, inside the repository."),
    "select": (RULES, "Rules that report (ids, id prefixes such as GSG03, rule names, or ALL); default: all. "
                      "--select on the command line replaces it."),
    "ignore": (RULES, "Rules left out everywhere; --ignore on the command line adds to it."),
    "per_path_ignores": (GLOBS, "A path glob from the repository root (`*` crosses folders) -> the rules left "
                                "out for files it matches."),
}
RULE_KEYS = tuple(k for k, (kind, _) in FIELDS.items() if kind in (RULES, GLOBS))
PROJECT_KEYS = tuple(FIELDS)
MAX_RULE_ENTRIES = 1_000  # select/ignore entries and per-path globs in one project file: far above any real list
MAX_PATH_CHARS = 4_096  # a `fleet:` / `rendered:` path: PATH_MAX on Linux


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class ProjectFile:
    """What a gsg.yaml declares: the project name (None when it only configures rules), its rule selection, and
    the files it names (paths as gsg opens them: joined to the project file's folder)."""

    __repr__ = fields_repr

    path: str
    name: str | None
    selection: Selection = field(default_factory=Selection)
    fleet: str | None = None
    rendered: str | None = None


def _rule_list(doc, path: tuple, shown: str) -> tuple[RuleChoice, ...]:
    """A list of rule ids, id prefixes or names (`[GSG033, GSG04]`), each with its file:line for errors."""
    value = doc.data
    for part in path:
        value = value[part]
    line, column = doc.position(path)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise GsgError(f"`{'.'.join(map(str, path))}` is a list of rule ids, such as [GSG033, GSG04]",
                       where=f"{shown}:{line}:{column}")
    if len(value) > MAX_RULE_ENTRIES:
        raise GsgError(f"`{path[0]}` has {len(value):,} entries; at most {MAX_RULE_ENTRIES:,}",
                       where=f"{shown}:{line}:{column}")
    choices = []
    for index, pattern in enumerate(value):
        entry_line, _ = doc.position(path + (index,))
        choices.append(RuleChoice(pattern, f"{shown}:{entry_line}"))
    return tuple(choices)


def _selection(doc, shown: str) -> Selection:
    select = _rule_list(doc, ("select",), shown) if "select" in doc.data else ()
    ignore = _rule_list(doc, ("ignore",), shown) if "ignore" in doc.data else ()
    per_path: list[tuple[str, RuleChoice]] = []
    if "per_path_ignores" in doc.data:
        globs = doc.data["per_path_ignores"]
        line, column = doc.position(("per_path_ignores",))
        if not isinstance(globs, dict) or not all(isinstance(g, str) for g in globs):
            raise GsgError("`per_path_ignores` maps a path glob (from the repository root) to rule ids: "
                           "{\"specs/batch/*\": [GSG033]}", where=f"{shown}:{line}:{column}")
        if len(globs) > MAX_RULE_ENTRIES:
            raise GsgError(f"`per_path_ignores` has {len(globs):,} globs; at most {MAX_RULE_ENTRIES:,}",
                           where=f"{shown}:{line}:{column}")
        per_path = [(glob, choice) for glob in globs for choice in _rule_list(doc, ("per_path_ignores", glob), shown)]
    selection = Selection(select, ignore, tuple(per_path))
    problems = selection.problems()
    if problems:
        raise GsgError(problems[0])
    return selection


def repository_of(folder: str) -> str | None:
    """The repository a folder lies in (the nearest folder at or above it holding `.git`); None outside any.
    The one upward search for the repository root (report paths, project-file paths, template lookup)."""
    here = folder
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _inside(path: str, folder: str) -> bool:
    """Whether the path, links resolved, lies in the folder (links resolved too)."""
    return (os.path.realpath(path) + os.sep).startswith(os.path.realpath(folder).rstrip(os.sep) + os.sep)


def _named_file(doc, key: str, shown: str, folder: str) -> str:
    """A path the project file names, joined to its folder. In a repository (every CI checkout) it must stay
    inside it: a pull request that points `fleet:` at /etc or ~/.ssh would have gsg echo that file's lines in
    CI's log. A tree outside any repository (an unpacked archive) has no such bound to hold."""
    value = doc.data[key]
    line, column = doc.position((key,))
    where = f"{shown}:{line}:{column}"
    if not isinstance(value, str) or not value.strip():
        raise GsgError(f"`{key}` is a path relative to this file, such as ../fleets/prod.yaml", where=where)
    problem = path_problem(value) or (f"the path is {len(value):,} characters long" if len(value) > MAX_PATH_CHARS
                                      else None)
    if problem is not None:
        raise GsgError(f"`{key}` is not a usable path: {problem}", where=where)
    joined = os.path.normpath(os.path.join(folder, value))
    repository = repository_of(folder)
    if not _inside(joined, repository or os.sep):
        bound = display_path(os.path.realpath(repository or os.sep))
        raise GsgError(f"`{key}: {value[:200]}` leads outside the repository ({bound}); a project file names files "
                       "inside it", where=where)
    return joined


def parse_project_file(path: str) -> ProjectFile:
    """A gsg.yaml: the keys of FIELDS; any other key is an error (nothing is silently ignored)."""
    shown = display_path(path)
    repository = repository_of(os.path.dirname(os.path.abspath(path)))
    if repository is not None and not _inside(path, repository):  # as _named_file: a pull request's gsg.yaml
        # linked to ~/.config or /etc would have gsg read that file and echo its keys in CI's log
        bound = display_path(os.path.realpath(repository))
        raise GsgError(f"a symbolic link to a file outside the repository ({bound}): not read; a project file lies in "
                       "the repository it configures", where=shown)
    try:
        docs = load_documents(read_text(Path(path)))
    except YamlSyntaxError as exc:
        raise GsgError(str(exc), where=f"{shown}:{exc.line}:{exc.column}") from None
    refuse_duplicate_keys(docs, shown)
    refuse_yaml11_numbers(docs, shown)
    refuse_non_text_keys(docs, shown)
    if len(docs) != 1 or not isinstance(docs[0].data, dict):
        raise GsgError("a project file is one mapping: `project: NAME`", where=shown)
    doc = docs[0]
    for key in doc.data:
        if key not in PROJECT_KEYS:
            line, column = doc.position((key,), key=True)
            raise GsgError(f"unknown field '{str(key)[:80]}' (a project file holds {', '.join(PROJECT_KEYS)})",
                           where=f"{shown}:{line}:{column}")
    if not doc.data:
        raise GsgError("missing `project: NAME`", where=f"{shown}:{doc.start_line}:1")
    name = None
    if "project" in doc.data:
        line, column = doc.position(("project",))
        name = check_name(doc.data["project"], f"{shown}:{line}:{column}")
    folder = os.path.dirname(os.path.abspath(path))
    named = {key: _named_file(doc, key, shown, folder) for key, (kind, _) in FIELDS.items()
             if kind == PATH and key in doc.data}
    return ProjectFile(path, name, _selection(doc, shown), named.get("fleet"), named.get("rendered"))


def project_settings(spec_paths: list[str]) -> ProjectFile | None:
    """The project file above these spec paths, parsed (None without one)."""
    own = project_file_of(spec_paths)
    return parse_project_file(own) if own else None


def read_project_file(path: str) -> str | None:
    """The project name a gsg.yaml declares, or None when it only configures rules."""
    return parse_project_file(path).name


def project_file_of(spec_paths: list[str]) -> str | None:
    """The one project file above these spec paths (None without one); paths of different projects are an error."""
    files = sorted({f for f in (_project_file_above(_start(p)) for p in spec_paths) if f})
    if len(files) > 1:
        raise GsgError("these specs belong to different project files (" + ", ".join(display_path(f) for f in files)
                       + "); plan and apply each project on its own")
    return files[0] if files else None


def repository_root(spec_paths: list[str]) -> str:
    """The folder CI systems resolve report paths against: the repository holding the specs (a folder with
    `.git`, found upwards from the first spec path), else the project file's folder, else the working
    directory. The same from any working directory inside the repository."""
    start = _start(spec_paths[0]) if spec_paths else os.getcwd()
    repository = repository_of(start)
    if repository is not None:
        return repository
    project = _project_file_above(start)
    return os.path.dirname(project) if project else os.getcwd()


def rule_selection(spec_paths: list[str], select: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> Selection:
    """The project file's rule selection with the command line's: --select replaces `select`, --ignore adds to
    `ignore` (as in ruff). An entry that names no rule is an error naming it."""
    own = project_file_of(spec_paths)
    base = parse_project_file(own).selection if own else Selection()
    chosen = Selection(tuple(RuleChoice(p, "--select") for p in select) or base.select,
                       base.ignore + tuple(RuleChoice(p, "--ignore") for p in ignore), base.per_path)
    problems = chosen.problems()
    if problems:
        raise GsgError(problems[0])
    return chosen


def find_identity(spec_paths: list[str], project_option: str | None) -> Identity | None:
    """The project these spec paths belong to, or None when none is declared. All paths must agree."""
    starts = [_start(p) for p in spec_paths]
    own = project_file_of(spec_paths)
    for start in {s for s, p in zip(starts, spec_paths) if os.path.isdir(os.path.abspath(p))}:
        nested = _nested_project_files(start, own)
        if nested:
            raise GsgError("a project file inside the spec tree declares a nested project; apply it on its own",
                           where=display_path(nested[0]))
    name = read_project_file(own) if own is not None else None
    if own is not None and name is not None:
        if project_option and project_option != name:
            raise GsgError(f"--project/GSG_PROJECT says '{project_option}' but {display_path(own)} declares "
                           f"'{name}'; drop the option or fix the file")
        return Identity(name, os.path.dirname(own), f"{display_path(own)}")
    if not project_option:
        return None
    name = check_name(project_option, "--project/GSG_PROJECT")
    # a gsg.yaml that only configures rules still marks the project's root
    root = os.path.dirname(own) if own is not None else os.path.commonpath(starts) if starts else os.getcwd()
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


PROJECT_SCHEMA_ID = "https://gpustack-guard.dev/schema/project-v1.json"


def _any_case(text: str) -> str:
    """A JSON Schema (ECMA-262) pattern fragment matching `text` in any letter case, as the loader does."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c if c.isdigit() or c == "-" else re.escape(c)
                   for c in text)  # `\-` is no valid escape outside a class in ECMA-262's unicode mode


def project_schema() -> dict:
    """The JSON Schema (draft-07) of gsg.yaml, from FIELDS and the limits the parser holds: what an editor and
    check-jsonschema accept is what parse_project_file accepts (rule entries that name no rule, and paths leading
    outside the repository, only the parser can tell)."""
    from gpustack_guard.core.rules.registry import RULES as ALL_RULES

    names = "|".join(_any_case(r.name) for r in sorted(ALL_RULES.values(), key=lambda r: r.name))
    entry = {"type": "string", "anyOf": [{"pattern": r"^\s*[Gg][Ss][Gg][0-9]{0,3}\s*$"},
                                         {"pattern": r"^\s*[Aa][Ll][Ll]\s*$"},
                                         {"pattern": rf"^\s*({names})\s*$"}]}
    rules = {"type": "array", "items": entry, "maxItems": MAX_RULE_ENTRIES}
    kinds: dict[str, dict] = {NAME: {"type": "string", "pattern": "^" + PROJECT_NAME.pattern.removesuffix(r"\Z") + "$"},
             PATH: {"type": "string", "pattern": r"\S", "maxLength": MAX_PATH_CHARS},
             RULES: rules,
             GLOBS: {"type": "object", "additionalProperties": rules, "maxProperties": MAX_RULE_ENTRIES}}
    return {"$schema": "http://json-schema.org/draft-07/schema#", "$id": PROJECT_SCHEMA_ID,
            "title": "gpustack-guard project file (gsg.yaml)",
            "description": "The project a spec tree belongs to, the files its checks read and its rule selection.",
            "type": "object", "minProperties": 1, "additionalProperties": False,
            "properties": {key: {**kinds[kind], "description": text} for key, (kind, text) in FIELDS.items()}}
