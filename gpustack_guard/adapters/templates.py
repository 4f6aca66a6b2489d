"""Guard templates: Jinja2 (sandboxed, StrictUndefined) rendering pinned and default backend arguments.

A template file `templates/<name>.yaml.j2` renders a YAML mapping:

    pinned:   [--flag=value, ...]   # the spec may not contradict these
    defaults: [--flag=value, ...]   # the spec may override these
    env:      {NAME: value}         # merged under the spec's env
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpustack_guard.adapters import template_limits as L
from gpustack_guard.adapters.files.regular_file import TooLarge, Unreadable, read_regular
from gpustack_guard.adapters.files.yaml_documents import load_documents
from gpustack_guard.adapters.files.yaml_positions import YamlSyntaxError
from gpustack_guard.adapters.template_limits import name_problem, template_source
from gpustack_guard.core import echo
from gpustack_guard.core.ports import TemplateError, TemplateOutput

if TYPE_CHECKING:
    import jinja2

SUFFIX = ".yaml.j2"


def default_cache_dir() -> Path:
    """gsg's own cache (compiled templates): $GSG_CACHE_DIR, else $XDG_CACHE_HOME/gsg, else ~/.cache/gsg. Hub
    files are not kept here but in the standard Hugging Face cache (model_sources/hub_cache.py)."""
    root = os.environ.get("GSG_CACHE_DIR") or os.path.join(os.environ.get("XDG_CACHE_HOME")
                                                           or os.path.expanduser("~/.cache"), "gsg")
    return Path(root)


def _root_index(chain: list[Path]) -> int | None:
    """Index in `chain` (a folder, then its parents) of the highest folder the lookup may reach: the repository
    root; without one, the folder above the project file's (templates/ beside specs/gsg.yaml is the usual
    layout); None when neither is there."""
    from gpustack_guard.adapters.files.project_file import repository_of
    from gpustack_guard.adapters.files.spec_loader import PROJECT_FILES

    repository = repository_of(str(chain[0]))
    if repository is not None:
        return chain.index(Path(repository))
    for index, candidate in enumerate(chain):
        if any((candidate / name).exists() for name in PROJECT_FILES):
            return min(index + 1, len(chain) - 1)
    return None


def _folders_up_to_root(folder: Path) -> list[Path]:
    """The folder and its parents up to the repository root (see _root_index); without a root, the folder and
    its parent (the layout of a spec folder beside templates/)."""
    chain = [folder, *folder.parents]
    top = _root_index(chain)
    return chain[:top + 1] if top is not None else chain[:2]


def default_search_path(spec_paths: list[str]) -> list[Path]:
    """templates/ in each spec folder and each folder above it up to the repository root (nearest first), then
    the ones gsg ships. Never the working directory: the same specs find the same templates from anywhere."""
    candidates = []
    for raw in spec_paths:
        base = Path(raw).resolve()
        base = base if base.is_dir() else base.parent
        candidates += [folder / "templates" for folder in _folders_up_to_root(base)]
    package = Path(__file__).resolve().parents[1]  # gpustack_guard/
    candidates += [package / "_templates", package.parent / "templates"]
    seen, result = set(), []
    for path in candidates:
        if path.is_dir() and path not in seen:
            seen.add(path)
            result.append(path)
    return result


def sandbox_limits() -> dict[str, int]:
    """The limits every template renders under (`gsg templates -o json` shows them)."""
    return {"loop_iterations": L.MAX_LOOP_ITERATIONS, "range_items": L.MAX_RANGE, "call_depth": L.MAX_CALL_DEPTH,
            "macro_calls": L.MAX_MACRO_CALLS, "template_loads": L.MAX_TEMPLATE_LOADS,
            "output_chars": L.MAX_OUTPUT_CHARS, "produced_chars": L.MAX_PRODUCED_CHARS,
            "value_chars": L.MAX_VALUE_SIZE, "int_bits": L.MAX_INT_BITS, "template_bytes": L.MAX_TEMPLATE_BYTES,
            "nesting": L.MAX_NESTING}


def source_of(node: Any) -> str:
    """A default value as the template writes it (constants only; anything else shown as an expression)."""
    from jinja2 import nodes

    if isinstance(node, nodes.Const):
        return json.dumps(node.value) if isinstance(node.value, str) else str(node.value)
    return "(expression)"


def _reads_besides_vars(reads: dict[str, frozenset[str] | None] | None) -> list[str]:
    if reads is None:
        return ["(the whole context: the template includes others)"]
    shown = []
    for name, attrs in reads.items():
        if name == "vars":
            continue
        shown += [f"{name}.{a}" for a in sorted(attrs)] if attrs else [name]
    return shown


def _argument_lines(source: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The `- --flag=...` lines under pinned: and defaults:, Jinja tags stripped of their whitespace control."""
    sections: dict[str, list[str]] = {"pinned": [], "defaults": []}
    current = None
    for raw in source.splitlines():
        line = raw.strip()
        if line.rstrip(":") in sections and line.endswith(":"):
            current = line.rstrip(":")
        elif line.endswith(":") or (line and not line.startswith(("-", "{%", "{#"))):
            current = None if not line.startswith("{{") else current
        elif current and line.startswith("- "):
            sections[current].append(line[2:])
    return tuple(sections["pinned"]), tuple(sections["defaults"])


class TemplateRenderer:
    """Renders guard templates found on `search_path`; with `cache_dir`, compiled templates are kept there."""

    def __init__(self, search_path: list[Path], cache_dir: Path | None = None):
        self.search_path = search_path
        self._cache_dir = cache_dir
        self._jinja: Any = None  # the sandboxed environment, made on the first template compiled or parsed
        self._fingerprint: str | None = None  # of what a rendering depends on besides its source and context
        self._sources: dict[str, str | None] = {}  # template file -> its text, as kept renderings key it
        self._digests: dict[str, str] = {}  # template file -> SHA-256 of that text
        self._kept_count: int | None = None  # renderings in the cache, counted on the first write
        self._located: dict[str, Path] = {}
        self._shadowed: dict[str, tuple[str, ...]] = {}  # name -> the files the one used hides
        # template file -> what it reads of the context: name -> the attributes read (None: the whole value);
        # None for a template that includes or imports others (keyed on the whole context)
        self._reads: dict[str, dict[str, frozenset[str] | None] | None] = {}
        self._outputs: dict[tuple, TemplateOutput] = {}  # identical inputs render identically
        self._key_plans: dict[tuple, tuple] = {}  # (template file, context names) -> _key_plan's answer
        self._variables: dict[str, frozenset[str] | None] = {}
        self._trees: dict[str, Any] = {}  # template file name -> its parsed syntax tree
        self._analysis_dir = cache_dir

    def locate(self, name: str) -> Path:
        if name in self._located:
            return self._located[name]
        self._located[name] = self._find(name)
        return self._located[name]

    def _find(self, name: str) -> Path:
        problem = name_problem(name)
        if problem:
            raise TemplateError(problem, name)
        filename = name if name.endswith(".j2") else name + SUFFIX
        # a FIFO there is reported when read, not skipped
        found = [directory / filename for directory in self.search_path if os.path.lexists(directory / filename)]
        if found:
            self._shadowed[name] = tuple(template_label(path) for path in found[1:] if _differ(found[0], path))
            return found[0]
        where = ", ".join(str(p) for p in self.search_path) or "(no templates/ folder found)"
        raise TemplateError(f"template '{name}' not found in {where}", name)

    @property
    def _env(self) -> Any:
        if self._jinja is None:
            from gpustack_guard.adapters.template_engine import environment

            self._jinja = environment(self.search_path, self._cache_dir)
        return self._jinja

    def render(self, name: str, context: dict[str, Any]) -> TemplateOutput:
        path = self.locate(name)
        filename = path.name
        if str(path) in self._reads:  # analysed already: an earlier rendering of the same reads is the output
            # looked up before the sandbox's context and Jinja's get_template (a stat of the file per call):
            # the 4,000 templated specs of the 10,000-spec scale tree, ~21 -> ~15 us each
            kept = self._outputs.get(self._cache_key(path, context))
            if kept is not None:
                return kept
        stored = self._kept_rendering(path, context)
        if stored is not None:  # rendered by an earlier run from the same source, context reads and code
            key, text = stored
            kept = self._outputs.get(key)
            if kept is not None:
                return kept
            # only a text that made a valid output is kept: one that does not was changed on disk, so render again
            with contextlib.suppress(TemplateError):
                return self._output(name, path, key, text, self._variables.get(filename))
        import jinja2

        from gpustack_guard.adapters import template_sandbox as S

        try:
            with S.rendering():
                template = self._env.get_template(filename)
                key = self._cache_key(path, context)
                if key in self._outputs:
                    return self._outputs[key]
                text = _bounded_text(template.generate(**context))
            variables = self.variables(filename)
        except S.SandboxLimit as exc:
            shown = _shown(path)
            line = _template_line(exc, str(path))
            where = f" at {shown}:{line}" if line else f" in {shown}"
            raise TemplateError(f"template '{name}' stopped{where}: {exc}", shown) from None
        except jinja2.TemplateSyntaxError as exc:
            raise TemplateError(f"template syntax error: {exc.message}", _shown(path), exc.lineno or 0) from None
        except jinja2.UndefinedError as exc:
            raise TemplateError(f"undefined template variable: {exc.message}", _shown(path),
                                _template_line(exc, str(path))) from None
        except jinja2.TemplateError as exc:
            raise TemplateError(f"template error: {exc}", _shown(path), _template_line(exc, str(path))) from None
        except Exception as exc:  # 1/0, 10.0**400, int('x'): the template's own error, never gsg's
            raise TemplateError(f"template error: {type(exc).__name__}: {exc}", _shown(path),
                                _template_line(exc, str(path))) from None
        output = self._output(name, path, key, text, variables)  # a text that is no valid output raises here
        self._keep_rendering(path, key, text)
        return output

    def _output(self, name: str, path: Path, key: tuple, text: str,
                variables: frozenset[str] | None) -> TemplateOutput:
        # the displayed path only for what is not kept already (a getcwd per templated spec: ~60 of 4,000 in
        # cProfile at 10,000 specs) and for the errors above
        shown = _shown(path)
        output = dataclasses.replace(_parse_output(text, shown), variables=variables, source=template_label(path),
                                     shadows=self._shadowed.get(name, ()))
        self._outputs[key] = output
        return output

    # --- renderings kept on disk ------------------------------------------------------------------------------
    # Why: importing Jinja2 was ~220 M instructions, ~13 % of validating 1,000 specs, paid on every run though a
    # tree's templates and the context they read rarely change between runs (docs/performance.md, twentieth
    # round). A rendering is kept only for a template that includes and imports nothing, keyed by its text, what
    # it reads of the context (the in-process key) and what else a rendering depends on (_fingerprint); any doubt
    # (unreadable, too large, another shape) renders again.

    def _kept_rendering(self, path: Path, context: dict[str, Any]) -> tuple[tuple, str] | None:
        source = self._kept_source(path)
        if source is None or self._cache_dir is None:
            return None
        if str(path) not in self._reads:
            analysis = _stored_analysis(self._cache_dir, source)
            if analysis is None:
                return None
            self._reads[str(path)], self._variables[path.name] = analysis
        if not _keepable(self._reads[str(path)]):
            return None
        key = self._cache_key(path, context)
        try:
            data = read_regular(self._rendering_file(path, key), MAX_KEPT_RENDERING_BYTES)
            text = data.decode("utf-8")
        except (OSError, TooLarge, Unreadable, UnicodeDecodeError):
            return None
        return (key, text) if len(text) <= L.MAX_OUTPUT_CHARS else None

    def _keep_rendering(self, path: Path, key: tuple, text: str) -> None:
        if self._kept_source(path) is None or not _keepable(self._reads.get(str(path))) or not self._room_to_keep():
            return
        _write_whole(self._rendering_file(path, key), text)

    def _kept_source(self, path: Path) -> str | None:
        """The template's text as the kept renderings key it, read once per renderer; None without a cache or
        for a file the sandbox refuses (rendering again says why)."""
        where = str(path)
        if self._cache_dir is not None and where not in self._sources:
            try:
                self._sources[where] = template_source(path)
            except L.SandboxLimit:
                self._sources[where] = None
        return self._sources.get(where)

    def _room_to_keep(self) -> bool:
        """Whether the cache holds fewer than MAX_KEPT_RENDERINGS renderings, counted once per renderer (on its
        first write): a tree of many distinct contexts, or years of edits, stops adding files there instead of
        growing the folder without bound; its specs still render, every run."""
        if self._kept_count is None:
            assert self._cache_dir is not None
            self._kept_count = 0
            with contextlib.suppress(OSError), os.scandir(self._cache_dir) as entries:
                for entry in entries:
                    self._kept_count += entry.name.startswith("rendering-")
                    if self._kept_count >= MAX_KEPT_RENDERINGS:
                        break
        if self._kept_count >= MAX_KEPT_RENDERINGS:
            return False
        self._kept_count += 1
        return True

    def _rendering_file(self, path: Path, key: tuple) -> Path:
        import hashlib

        where = str(path)
        if where not in self._digests:  # the template's text hashed once per renderer, not per distinct context
            source = self._sources[where] or ""
            self._digests[where] = hashlib.sha256(source.encode("utf-8", "replace")).hexdigest()
        if self._fingerprint is None:
            self._fingerprint = _fingerprint()
        # the key's first part is the template's path; its text's digest stands for it, so a moved copy matches
        identity = f"{RENDERING_VERSION}\0{self._fingerprint}\0{path.name}\0{self._digests[where]}\0{key[1:]!r}"
        assert self._cache_dir is not None
        return self._cache_dir / f"rendering-{hashlib.sha256(identity.encode('utf-8', 'replace')).hexdigest()}.txt"

    def variables(self, filename: str) -> frozenset[str] | None:
        """The guard.vars keys a template reads, through what it includes and imports (by constant name);
        None when not known statically."""
        if filename not in self._variables:
            self._variables[filename] = _vars_read(self._env, filename, set(), self._trees.get(filename))
        return self._variables[filename]

    def _tree(self, path: Path) -> Any:
        """The template's syntax tree, parsed once per renderer for both analyses (context reads, vars read)."""
        if path.name not in self._trees:
            self._trees[path.name] = self._env.parse(template_source(path))
        return self._trees[path.name]

    def _analyse(self, path: Path) -> None:
        """What the template reads of the context and of guard.vars, from the analysis cache when this source was
        analysed before: parsing and walking the three shipped templates was ~6 ms of a quickstart run. Only a
        template that includes or imports none is stored (its analysis depends on its own text alone)."""
        if str(path) in self._reads:
            return
        source = template_source(path) if self._analysis_dir else ""
        stored = _stored_analysis(self._analysis_dir, source) if self._analysis_dir else None
        if stored is not None:
            self._reads[str(path)], self._variables[path.name] = stored
            return
        reads = _context_reads(self._tree(path))
        self._reads[str(path)] = reads
        if reads is not None and self._analysis_dir:
            _store_analysis(self._analysis_dir, source, reads, self.variables(path.name))

    def _cache_key(self, path: Path, context: dict[str, Any]) -> tuple:
        """Only what the template reads of the context makes up the key: `placement.gpus`, not the GPU ids
        beside it, so specs differing only in what a template ignores share one rendering."""
        where = str(path)
        self._analyse(path)
        plan = self._key_plans.get((where, tuple(context)))
        if plan is None:
            plan = self._key_plan(where, context)
        parts: list[tuple] = [(where,)]
        for name, attrs in plan:
            value = _plain(context[name])
            if attrs is None or not isinstance(value, dict):  # `vars.items()`: attrs None, the whole mapping
                parts.append((name, _key_part(value)))
            else:
                parts.append((name,) + tuple((a, _key_part(value.get(a, _ABSENT))) for a in attrs))
        return tuple(parts)

    def _key_plan(self, where: str, context: dict[str, Any]) -> tuple[tuple[str, tuple[str, ...] | None], ...]:
        """Which context names make up the key, in order, each with the attributes read in order: a function of
        what the template reads (fixed once analysed) and the context's names alone, so kept per template and
        names (every spec's context has the same names: 4,000 templated specs, _cache_key ~5.9 -> ~3.4 us)."""
        reads = self._reads[where]
        if reads is None:
            reads = dict.fromkeys(context)
        plan = tuple((name, None if attrs is None else tuple(sorted(attrs)))
                     for name in sorted(set(reads) & set(context)) for attrs in (reads[name],))
        if len(self._key_plans) < MAX_KEY_PLANS_KEPT:
            self._key_plans[(where, tuple(context))] = plan
        return plan


# Bump when _context_reads or _vars_read change what they find: stored analyses of older code are then unused.
ANALYSIS_VERSION = "1"
MAX_KEY_PLANS_KEPT = 256  # (template, context names) pairs per renderer; gsg's contexts all have the same names
MAX_ANALYSIS_BYTES = 64 << 10  # a stored analysis is a few hundred bytes; a bigger file is not ours, and ignored

Reads = dict[str, frozenset[str] | None]


def _analysis_file(directory: Path, source: str) -> Path:
    import hashlib

    digest = hashlib.sha256(f"{ANALYSIS_VERSION}:{L.SANDBOX_VERSION}:{source}".encode("utf-8", "replace"))
    return directory / f"analysis-{digest.hexdigest()}.json"


def _stored_analysis(directory: Path, source: str) -> tuple[Reads, frozenset[str] | None] | None:
    """A stored analysis of this exact source, or None (absent, unreadable, or not in the shape written)."""
    try:
        stored = json.loads(read_regular(_analysis_file(directory, source), MAX_ANALYSIS_BYTES))
    except (OSError, TooLarge, Unreadable, ValueError):
        return None
    if not isinstance(stored, dict) or not isinstance(stored.get("reads"), dict) or "vars" not in stored:
        return None
    names = [stored["vars"]] + list(stored["reads"].values())
    if not all(n is None or (isinstance(n, list) and all(isinstance(a, str) for a in n)) for n in names):
        return None
    reads = {str(k): None if v is None else frozenset(v) for k, v in stored["reads"].items()}
    return reads, None if stored["vars"] is None else frozenset(stored["vars"])


def _store_analysis(directory: Path, source: str, reads: Reads, variables: frozenset[str] | None) -> None:
    text = json.dumps({"reads": {k: None if v is None else sorted(v) for k, v in reads.items()},
                       "vars": None if variables is None else sorted(variables)}, sort_keys=True)
    _write_whole(_analysis_file(directory, source), text)


def _write_whole(target: Path, text: str) -> None:
    """Written whole (a temporary file renamed into place) or not at all; a read-only cache is left alone."""
    import tempfile

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".kept-", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
                stream.write(text)
            os.replace(temporary, target)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        pass


def _keepable(reads: Reads | None) -> bool:
    """Whether a rendering may be kept: its template includes nothing (reads known) and does not read the spec's
    env, which may hold a literal secret (a `${NAME}` reference stays unresolved in the context), or the whole spec;
    such a rendering is made again on every run rather than written to the cache."""
    if reads is None or "spec" not in reads:
        return reads is not None
    spec = reads["spec"]
    return spec is not None and "env" not in spec


# Bump when what a kept rendering depends on changes in a way _fingerprint cannot see.
RENDERING_VERSION = "1"
MAX_KEPT_RENDERING_BYTES = 4 * L.MAX_OUTPUT_CHARS  # the output limit's characters in UTF-8; a bigger file is not ours
# rendering files one cache folder holds: a few hundred bytes each; a 10,000-spec tree of distinct contexts fits
MAX_KEPT_RENDERINGS = 16_384


def _fingerprint() -> str:
    """What a rendering depends on besides its template's text and what it reads of the context: gsg's version,
    the sandbox's limits, and the code that renders, by each file's size and modification time (gsg's template
    modules and version test, Jinja2's package): an upgrade or an edit of either renders again."""
    import importlib.machinery

    from gpustack_guard import __version__

    package = Path(__file__).resolve().parents[1]
    files = [package / "adapters" / name for name in ("templates.py", "template_engine.py", "template_sandbox.py",
                                                       "template_limits.py")]
    files.append(package / "core" / "versions.py")
    jinja = importlib.machinery.PathFinder.find_spec("jinja2")
    files.append(Path(jinja.origin) if jinja is not None and jinja.origin else Path("(no jinja2)"))
    stamps = []
    for file in files:
        try:
            stat = file.stat()
            stamps.append(f"{file}:{stat.st_size}:{stat.st_mtime_ns}")
        except OSError:
            stamps.append(f"{file}:-")
    return "\0".join([__version__, L.SANDBOX_VERSION, repr(sorted(sandbox_limits().items())), *stamps])


def _bounded_text(chunks: Any) -> str:
    """The rendered text, stopped as soon as it passes the sandbox's output limit."""
    parts, total = [], 0
    for chunk in chunks:
        total += len(chunk)
        if total > L.MAX_OUTPUT_CHARS:
            raise L.SandboxLimit(f"the output passed {L.MAX_OUTPUT_CHARS:,} characters (the sandbox limit)")
        parts.append(chunk)
    return "".join(parts)


def _vars_read(env: jinja2.Environment, filename: str, seen: set[str], tree: Any = None) -> frozenset[str] | None:
    """`vars.x`, `vars['x']`, `vars.get('x', ...)` in a template and what it includes or imports by a constant
    name; None when `vars` is also used whole (looped over, passed to a filter or a macro, a computed key) or an
    included name is computed."""
    from jinja2 import meta

    if filename in seen:
        return frozenset()
    seen.add(filename)
    try:
        if tree is None:
            source = env.loader.get_source(env, filename)[0] if env.loader else ""
            tree = env.parse(source)
    except Exception:  # noqa: BLE001 - the rendering succeeded; what cannot be read here is only unknown
        return None
    read = _attribute_reads(tree, {"vars"})["vars"]
    if read is None:
        return None
    for referenced in meta.find_referenced_templates(tree):
        inner_read = None if referenced is None else _vars_read(env, referenced, seen)
        if inner_read is None:
            return None
        read |= inner_read
    return read


_ABSENT = "\0absent"  # a key the context lacks is keyed apart from any real value


def _key_part(value: Any) -> Any:
    """One context value as part of a cache key. A plain string, int, bool or None (most `vars`) is its own key
    beside its type, so 1, 1.0 and True stay apart; a float by its repr, so -0.0 is not 0.0; anything else as
    sorted JSON (benchmarks/scale.py: the JSON round for every plain value was ~2 % of validating 1,000 specs)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return kind, value
    if kind is float:
        return kind, repr(value)
    return _dump(value)


def _dump(value: Any) -> str:
    return json.dumps(_plain(value), sort_keys=True, default=str)


def _context_reads(ast: Any) -> dict[str, frozenset[str] | None] | None:
    """For each context variable a template reads: the attributes it reads (`vars.x`, `vars["x"]`), or None
    when the variable is used whole (looped over, passed to a filter, compared). Jinja's own analysis
    finds the variables; a walk of the tree finds how each one is used."""
    from jinja2 import meta

    if list(meta.find_referenced_templates(ast)):
        return None
    return _attribute_reads(ast, meta.find_undeclared_variables(ast))


def _attribute_reads(ast: Any, names: set[str]) -> dict[str, frozenset[str] | None]:
    """For each of `names`: the keys the template reads of it (`v.x`, `v['x']`, `v.get('x', ...)`), or None
    when it is also used whole (looped over, passed to a filter or a macro, a computed key, `v.items()`)."""
    from jinja2 import nodes

    get_calls = {id(call.node): call for call in ast.find_all(nodes.Call) if isinstance(call.node, nodes.Getattr)}
    attrs: dict[str, set[str]] = {n: set() for n in names}
    as_attribute = dict.fromkeys(names, 0)
    whole: set[str] = set()
    for node in ast.find_all((nodes.Getattr, nodes.Getitem)):
        inner = node.node
        if not (isinstance(inner, nodes.Name) and inner.name in names):
            continue
        if isinstance(node, nodes.Getattr) and node.attr == "get":
            call = get_calls.get(id(node))
            if call is None or not call.args or not isinstance(call.args[0], nodes.Const):
                whole.add(inner.name)  # v.get(name): any key
                continue
            attrs[inner.name].add(str(call.args[0].value))
        elif isinstance(node, nodes.Getattr):
            if hasattr(dict, node.attr):  # v.items(), v.keys(): Jinja resolves a dict's methods before its keys
                whole.add(inner.name)
                continue
            attrs[inner.name].add(node.attr)
        elif isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
            attrs[inner.name].add(node.arg.value)
        else:
            continue  # a computed subscript: the Name counts as used whole below
        as_attribute[inner.name] += 1
    uses = dict.fromkeys(names, 0)
    for name_node in ast.find_all(nodes.Name):
        if name_node.name in uses and name_node.ctx == "load":
            uses[name_node.name] += 1
    return {n: frozenset(attrs[n]) if n not in whole and uses[n] == as_attribute[n] else None for n in names}


def _plain(value: Any) -> Any:
    if type(value) is dict or type(value) is str:  # most context values: neither is another kind of Mapping
        return value
    from collections.abc import Mapping

    return dict(value) if isinstance(value, Mapping) and not isinstance(value, dict) else value


def _shown(path: Path) -> str:
    from gpustack_guard.adapters.files.spec_loader import display_path

    return display_path(path)


def _differ(used: Path, hidden: Path) -> bool:
    """Whether hiding `hidden` changes anything: a byte-identical copy (a repository vendoring gsg's template)
    is not a shadow. Unreadable files count as different: the warning is the safe side."""
    try:
        return read_regular(used, L.MAX_TEMPLATE_BYTES) != read_regular(hidden, L.MAX_TEMPLATE_BYTES)
    except (TooLarge, Unreadable):
        return True


def template_label(path: Path) -> str:
    """Where a template came from, the same from any working directory: gsg's own, or the path from the
    project or repository root (a rendered file committed by one person compares equal on another's machine)."""
    package = Path(__file__).resolve().parents[1]
    resolved = path.resolve()
    if resolved.parent == package / "_templates":
        return f"{path.name} (shipped with gsg)"
    parents = list(resolved.parents)
    top = _root_index(parents)
    return resolved.relative_to(parents[top]).as_posix() if top is not None else str(resolved)


def _template_line(exc: BaseException, filename: str) -> int:
    """Jinja rewrites tracebacks so template frames carry the template's own file and line."""
    line = 0
    import traceback  # on a template error only (start-up)
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == filename:
            line = frame.lineno or line
    return line


@lru_cache(maxsize=1024)  # many specs render the same text; the output is immutable once parsed
def _parse_output(text: str, shown: str) -> TemplateOutput:
    surrogate = None if text.isascii() else _surrogate().search(text)
    if surrogate:  # a Jinja literal "\ud800": no character, and no UTF-8 for it (the report could not be written)
        raise TemplateError(f"rendered template holds U+{ord(surrogate.group()):04X}, half of a surrogate pair and no "
                            "character: it cannot be written as UTF-8", shown)
    try:
        docs = load_documents(text)
    except YamlSyntaxError as exc:
        raise TemplateError(f"rendered template is not valid YAML: {exc}", shown, exc.line) from None
    if len(docs) > 1:  # a `---` line: every document past the first was dropped unread
        raise TemplateError(f"rendered template holds {len(docs)} YAML documents (a `---` line); a template renders "
                            "one mapping", shown)
    for doc in docs:  # `pinned:` twice (a block in a loop, an include): YAML would keep only the last list
        if doc.duplicate_keys:
            path, line, _ = doc.duplicate_keys[0]
            raise TemplateError(f"rendered template repeats the key '{'.'.join(map(str, path))[:80]}' (line {line} of "
                                "its output); YAML keeps only the last", shown)
    data = docs[0].data if docs else {}
    if not isinstance(data, dict) or set(data) - {"pinned", "defaults", "env"}:
        raise TemplateError("a template must render a mapping with only pinned, defaults and env", shown)

    def written(path: tuple, value: Any) -> str:
        """A number as the template wrote it: str() of what YAML 1.1 read made `010` '8', `1:20` '80', `0x10`
        '16' and `1_000` '1000', an argument or env value other than the text rendered (and than YAML 1.2 reads)."""
        if isinstance(value, (int, float)):
            return docs[0].plain_text(path) or str(value)
        return str(value)

    def strings(key: str) -> list[str]:
        value = data.get(key) or []
        if not isinstance(value, list):
            raise TemplateError(f"'{key}' must render a list of arguments", shown)
        for index, item in enumerate(value):
            _check_text(item, f"{key}[{index}]", shown)
        return [written((key, index), v) for index, v in enumerate(value)
                if v is not None and str(v).strip()]  # an empty item (`- ` of an if) is none

    env = data.get("env") or {}
    if not isinstance(env, dict):
        raise TemplateError("'env' must render a mapping", shown)
    for name, item in env.items():
        if not isinstance(name, str):
            raise TemplateError(f"template env renders a name that is {_yaml_kind(name)}, not text: quote it in "
                                "the template", shown)
        _check_text(item, f"env.{echo.value(name)}", shown, empty=False)
    return TemplateOutput(tuple(strings("pinned")), tuple(strings("defaults")),
                          tuple((str(k), written(("env", k), v)) for k, v in env.items()))


@cache  # only non-ASCII text is searched: the class is ~2.3 M instructions to compile, most renderings are ASCII
def _surrogate() -> re.Pattern[str]:
    return re.compile("[\ud800-\udfff]")


def _yaml_kind(value: Any) -> str:
    """What YAML read, as written: `the boolean true`, `null`, `a list ([1])`, `the date 2024-01-01`."""
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if value is None:
        return "null"
    kind = ("a list" if isinstance(value, list) else "a mapping" if isinstance(value, dict) else
            "a number" if isinstance(value, (int, float)) else "a date")
    return f"{kind} ({echo.value(value)})"


def _check_text(value: Any, where: str, shown: str, empty: bool = True) -> None:
    """An argument or env value renders as text or a number (written as YAML shows it). A boolean would be
    Python's 'True' (vLLM's int() of an env flag refuses it), a list or mapping Python's repr, a date its ISO
    text, null the text 'None': each is refused, naming it. `empty`: null is an empty item, skipped."""
    if isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return
    if value is None and empty:
        return
    raise TemplateError(f"template {where} renders {_yaml_kind(value)}, not text: quote it in the template", shown)
