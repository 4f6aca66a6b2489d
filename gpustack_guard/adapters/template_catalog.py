"""What `gsg templates` shows of each template on the search path (the I/O edge): its doc comment, variables with
defaults, what it reads and pins.

Apart from adapters.templates because only `gsg templates` describes templates: validate renders them and need not
build TemplateInfo at start-up (issue 34, docs/performance.md "Eleventh round").
"""

from __future__ import annotations

from pathlib import Path

import jinja2

from gpustack_guard.adapters import template_sandbox as S
from gpustack_guard.adapters.files.regular_file import TooLarge, Unreadable, read_regular
from gpustack_guard.adapters.files.spec_loader import decode
from gpustack_guard.adapters.templates import SUFFIX, _argument_lines, _context_reads, _reads_besides_vars, source_of
from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.values import frozen_value


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class TemplateInfo:
    """What `gsg templates` shows of one template: its doc comment, variables with defaults, what it pins."""

    __repr__ = fields_repr

    name: str
    path: Path
    summary: str
    variables: tuple[tuple[str, str | None], ...]  # guard.vars name, its default as written (None: required)
    reads: tuple[str, ...]  # context it reads besides vars: placement.gpus, backend_version, workload.*, ...
    pinned: tuple[str, ...]  # the argument lines as written in the template
    defaults: tuple[str, ...]
    problem: str | None = None  # why the template could not be described (it would not render either)


def _broken(name: str, path: Path, problem: str) -> TemplateInfo:
    return TemplateInfo(name, path, f"({problem})", (), (), (), (), problem=problem)


def describe_templates(search_path: list[Path]) -> list[TemplateInfo]:
    """Every template on the search path (the first of a name wins, as when rendering), described from its
    source: Jinja's syntax tree for the variables and defaults, the YAML lines for the arguments."""
    from jinja2 import nodes

    env = S.LimitedSandbox()  # its folding of constants ({{ "x" * 10**10 }}) is bounded, as when rendering
    seen: dict[str, TemplateInfo] = {}
    for directory in search_path:
        for path in sorted(directory.glob(f"*{SUFFIX}")):
            name = path.name[: -len(SUFFIX)]
            if name in seen:
                continue
            try:
                source = decode(read_regular(path, S.MAX_TEMPLATE_BYTES))
            except TooLarge as exc:
                seen[name] = _broken(name, path, f"not read: {exc.size:,} bytes, over the sandbox limit of "
                                                 f"{S.MAX_TEMPLATE_BYTES:,}")
                continue
            except Unreadable as exc:
                seen[name] = _broken(name, path, f"not read: {exc}")
                continue
            try:
                S.check_nesting(env, source, name)
                tree = env.parse(source)
                context_reads = _context_reads(tree)  # compiles the tree: an unknown filter or test stops here
            except jinja2.TemplateSyntaxError as exc:  # TemplateAssertionError (the unknown filter) is one
                seen[name] = _broken(name, path, f"does not parse: line {exc.lineno}: {exc.message}")
                continue
            except S.SandboxLimit as exc:
                seen[name] = _broken(name, path, f"not read: {exc}")
                continue
            defaults: dict[str, str | None] = {}
            for read in tree.find_all(nodes.Getattr):
                if isinstance(read.node, nodes.Name) and read.node.name == "vars":
                    defaults.setdefault(read.attr, None)
            for flt in tree.find_all(nodes.Filter):
                target = flt.node
                if flt.name == "default" and isinstance(target, nodes.Getattr) and \
                        isinstance(target.node, nodes.Name) and target.node.name == "vars" and flt.args:
                    defaults[target.attr] = source_of(flt.args[0])
            reads = sorted(_reads_besides_vars(context_reads))
            seen[name] = TemplateInfo(name, path, _doc_comment(source), tuple(sorted(defaults.items())),
                                      tuple(reads), *_argument_lines(source))
    return sorted(seen.values(), key=lambda t: t.name)


def _doc_comment(source: str) -> str:
    """The template's leading {# ... #} comment as one line."""
    text = source.lstrip()
    if not text.startswith("{#"):
        return ""
    body = text[2:].split("#}", 1)[0].strip("-")
    return " ".join(body.split())
