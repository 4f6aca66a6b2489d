"""The limits guard templates render under, the error for passing one, and reading a template file within them,
without Jinja2.

Their own module so that reading a template file (template_source) and serving a rendering kept on disk
(templates.TemplateRenderer) import no Jinja2: a validate run whose renderings are all kept never imports it
(docs/performance.md, twentieth round). template_sandbox enforces them and re-exports each name.
"""

from __future__ import annotations

import re
from pathlib import Path

from gpustack_guard.adapters.files.regular_file import TooLarge, Unreadable, read_regular
from gpustack_guard.adapters.files.spec_loader import decode
from gpustack_guard.core import echo

# A template file: the shipped ones are under 2 KiB; one of 64 KiB is data or an attack, and every other limit
# multiplies with it (a loop body's text times its iterations).
MAX_TEMPLATE_BYTES = 64 * 1024
# All {% for %} iterations of one rendering, nested and recursive loops included: a template loops over a few
# GPUs or flags; two nested range(1000) loops (a million iterations) are a hang in CI.
MAX_LOOP_ITERATIONS = 10_000
# Items one range() may produce (Jinja's own sandbox allows 100,000): nothing a template renders needs more.
MAX_RANGE = 1_000
# Nested calls (a macro calling itself, caller(), recursive loops, blocks): each level costs Jinja about ten
# Python frames, so 20 stays far below Python's recursion limit while no real template nests more than 3.
MAX_CALL_DEPTH = 20
# Macro (and caller) invocations in one rendering: a macro calling itself twice per level doubles each level,
# so depth alone does not bound the work (2**20 calls at depth 20).
MAX_MACRO_CALLS = 1_000
# Template loads in one rendering, the template itself included (include, import, from-import, extends): a
# template that includes itself, or an include in a loop.
MAX_TEMPLATE_LOADS = 32
# The rendered text: a template renders a few dozen argument lines (under 2 KiB).
MAX_OUTPUT_CHARS = 64 * 1024
# Every character produced while rendering, also into macro and {% set %} buffers that never reach the output
# (text built there is in memory before the output limit could see it).
MAX_PRODUCED_CHARS = 1024 * 1024
# One string or list built by the template ('x' * n, a + b, a ~ b, '%10000000s' % x, center(n), join): its
# characters (a list counts its items' characters).
MAX_VALUE_SIZE = 64 * 1024
# Integer size in bits: byte counts and token counts need under 64; Python's arithmetic on huge integers is
# quadratic and 2**100000 printed is 30,103 digits.
MAX_INT_BITS = 256

# Nesting depth of brackets and block tags ({% if %}, {% for %}, {% macro %}, ...): Jinja's parser and compiler and
# Python's compiler recurse once per level (several frames each), so ((((...)))) 300 deep is a RecursionError;
# a real template nests under 10 (and Python refuses more than 20 nested loops in compiled code anyway).
MAX_NESTING = 30

# bump when the limits' compiled form changes: compiled templates cached on disk by an older gsg are not reused
SANDBOX_VERSION = "limits-1"


class SandboxLimit(Exception):
    """A template went past one of the limits above; the message names the limit and its value."""

    def __init__(self, message: str):
        super().__init__(message)


# a template name is a file name in a templates folder: no folder part, no `..`, nothing a path could resolve
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


def name_problem(name: str) -> str | None:
    """Why a template name (guard.template, or an include's) is refused; None when it is a plain name."""
    if any(part in name for part in ("/", "\\", "..")) or name.startswith("~"):
        return (f"template name '{echo.value(name)}' is a path; name a template of the templates folder by its "
                "file name (without folders, `..`, `~` or a leading /)")
    if not _NAME.match(name):
        return (f"template name '{echo.value(name)}' is not a template file name (letters, digits, '.', '_' and "
                "'-' only)")
    return None


def template_source(path: Path) -> str:
    """A template file's text: a regular file within the sandbox's size limit (SandboxLimit otherwise)."""
    try:
        # strictly UTF-8, as specs are: a byte decoded as U+FFFD would be sent inside a flag
        return decode(read_regular(path, MAX_TEMPLATE_BYTES))
    except TooLarge as exc:
        raise SandboxLimit(f"template file {_shown(path)} is {exc.size:,} bytes (the sandbox limit is "
                           f"{MAX_TEMPLATE_BYTES:,})") from None
    except Unreadable as exc:
        raise SandboxLimit(f"template file {_shown(path)} cannot be read: {exc}") from None


def _shown(path: Path) -> str:
    from gpustack_guard.adapters.files.spec_loader import display_path

    return display_path(path)
