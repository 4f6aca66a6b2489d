"""The Jinja2 side of the template renderer: its loader, its bytecode cache and its sandboxed environment.

Kept apart from templates.py so that the renderer imports Jinja2 only when a template is compiled, parsed or
rendered: a validate run whose renderings are all kept on disk (templates.TemplateRenderer) never imports it
(docs/performance.md, twentieth round).
"""

from __future__ import annotations

import contextlib
import functools
import os
from pathlib import Path
from typing import Any

import jinja2

from gpustack_guard.adapters import template_sandbox as S
from gpustack_guard.adapters.template_limits import name_problem, template_source
from gpustack_guard.core.versions import version_lt


class _LimitedLoader(jinja2.FileSystemLoader):
    """FileSystemLoader that takes plain names only and refuses files over the sandbox's size limit."""

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Any]:
        problem = name_problem(template)
        if problem:
            raise S.SandboxLimit(problem)
        for directory in self.searchpath:
            path = os.path.join(directory, template)
            if os.path.lexists(path):  # a FIFO or a folder of that name is said, not waited on or skipped
                source = template_source(Path(path))
                mtime = os.path.getmtime(path)
                S.check_nesting(environment, source, template)
                return source, os.path.normpath(path), functools.partial(_unchanged, path, mtime)
        raise jinja2.TemplateNotFound(template)


def _unchanged(path: str, mtime: float) -> bool:
    try:
        return os.path.getmtime(path) == mtime
    except OSError:
        return False


class _LazyBytecodeCache(jinja2.FileSystemBytecodeCache):
    """Compiled templates on disk (keyed by source checksum), so repeated runs skip compilation. The folder is
    made on the first write, not when a renderer is built; a read-only home just compiles every time."""

    def __init__(self, directory: Path):
        super().__init__(str(directory))
        self._folder = directory

    def get_cache_key(self, name: str, filename: str | None = None) -> str:
        # code compiled by a gsg with other sandbox limits (or none) is never reused
        return super().get_cache_key(f"{S.SANDBOX_VERSION}:{name}", filename)

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):  # a cache path that is not a folder (or unreadable): compile instead
            super().load_bytecode(bucket)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            self._folder.mkdir(parents=True, exist_ok=True)
            super().dump_bytecode(bucket)
        except OSError:
            pass


def environment(search_path: list[Path], cache_dir: Path | None) -> S.LimitedSandbox:
    """The sandbox templates render in: plain names from `search_path`, StrictUndefined, compiled code kept in
    `cache_dir`."""
    env = S.LimitedSandbox(
        loader=_LimitedLoader([str(p) for p in search_path]),
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False,
        bytecode_cache=_LazyBytecodeCache(cache_dir) if cache_dir else None,
    )
    env.globals["version_lt"] = version_lt
    env.tests["below"] = lambda version, bound: version_lt(version, bound)
    return env
