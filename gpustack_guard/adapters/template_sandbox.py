"""The sandbox guard templates run in, with a bound on everything a template can make gsg do.

Templates come from pull requests that gsg validates in CI, so a template is hostile input: a loop over
`range(100000)` nested twice, a macro calling itself, a template including itself, `2**100000` or `'x'*10**9`
must end in one clear error, fast, never in a hang, a RecursionError or gigabytes of memory. Each limit is a
named constant of template_limits; hitting one raises `SandboxLimit`, which the renderer reports as GSG011 at the spec's
`guard.template` line.

How each is enforced (Jinja's SandboxedEnvironment, subclassed):
- loops: the compiled syntax tree wraps every `{% for %}` iterable (and a recursive loop's `loop(...)`) in a
  counting iterator, and each loop or macro body charges its literal text to the produced-characters budget;
- `range()` is replaced in the globals; calls (macros, `caller()`, blocks, recursive loops) go through `call`,
  which counts depth and macro calls and checks the width arguments of str methods;
- `*`, `**`, `+` and `%` are intercepted (`intercepted_binops` / `call_binop`), `~` is rewritten to a checked
  join, and the filters that enlarge strings check their arguments;
- template loads (the template itself, include, import, extends) are counted per rendering;
- every `{{ }}` value is counted (`finalize`), so text built in macro and `{% set %}` buffers is bounded too;
  the adapter renders through `generate()` and stops at MAX_OUTPUT_CHARS.
"""

from __future__ import annotations

import contextvars
import re
import string
from collections.abc import Iterable, Iterator
from functools import update_wrapper
from typing import Any

from jinja2 import nodes
from jinja2.runtime import LoopContext, Macro
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Namespace
from jinja2.visitor import NodeTransformer

from gpustack_guard.adapters.template_limits import (  # noqa: F401 - re-exported: S.MAX_* and S.SandboxLimit
    MAX_CALL_DEPTH,
    MAX_INT_BITS,
    MAX_LOOP_ITERATIONS,
    MAX_MACRO_CALLS,
    MAX_NESTING,
    MAX_OUTPUT_CHARS,
    MAX_PRODUCED_CHARS,
    MAX_RANGE,
    MAX_TEMPLATE_BYTES,
    MAX_TEMPLATE_LOADS,
    MAX_VALUE_SIZE,
    SANDBOX_VERSION,
    SandboxLimit,
)


class _Budget:
    """What one rendering has used so far."""

    def __init__(self) -> None:
        self.iterations = 0
        self.depth = 0
        self.macro_calls = 0
        self.loads = 0
        self.produced = 0

    def iteration(self) -> None:
        self.iterations += 1
        if self.iterations > MAX_LOOP_ITERATIONS:
            raise SandboxLimit(f"more than {MAX_LOOP_ITERATIONS:,} loop iterations (the sandbox limit)")

    def produce(self, size: int) -> None:
        self.produced += size
        if self.produced > MAX_PRODUCED_CHARS:
            raise SandboxLimit(f"more than {MAX_PRODUCED_CHARS:,} characters produced (the sandbox limit)")

    def load(self, name: str) -> None:
        self.loads += 1
        if self.loads > MAX_TEMPLATE_LOADS:
            raise SandboxLimit(f"more than {MAX_TEMPLATE_LOADS} template loads (include, import, extends; the "
                               f"sandbox limit), the last of '{name}': does a template include itself?")


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("gsg_template_budget", default=None)


def _budget() -> _Budget:
    budget = _BUDGET.get()
    if budget is None:  # outside LimitedSandbox.rendering() (a parse, a compile): a fresh one, still bounded
        budget = _Budget()
        _BUDGET.set(budget)
    return budget


class rendering:
    """`with rendering():` gives one rendering a fresh budget."""

    def __enter__(self) -> _Budget:
        self._budget = _Budget()
        self._token = _BUDGET.set(self._budget)
        return self._budget

    def __exit__(self, *exc: object) -> None:
        _BUDGET.reset(self._token)


_OPENING_TAGS = frozenset({"for", "if", "macro", "call", "filter", "block", "with", "autoescape", "trans"})


def check_nesting(env: Any, source: str, name: str) -> None:
    """Refuse a template nested deeper than MAX_NESTING before Jinja's recursive parser sees it (the lexer is
    iterative)."""
    depth = 0
    after_tag_open = False
    for lineno, token, value in env.lex(source, name):
        if token in ("operator",) and value in ("(", "[", "{"):
            depth += 1
        elif token in ("operator",) and value in (")", "]", "}"):
            depth -= 1
        elif after_tag_open and token == "name":
            if value in _OPENING_TAGS:
                depth += 1
            elif value.startswith("end"):
                depth -= 1
        after_tag_open = token == "block_begin" or (after_tag_open and token == "whitespace")
        if depth > MAX_NESTING:
            raise SandboxLimit(f"nesting deeper than {MAX_NESTING} levels at line {lineno} (the sandbox limit)")


def size_of(value: Any, limit: int = MAX_VALUE_SIZE) -> int:
    """Roughly the characters `value` prints as (strings: their length; lists, tuples, dicts: their items plus
    one each; numbers: their digits); stops counting past `limit`, so it costs at most `limit` steps."""
    total = 0
    stack = [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, (str, bytes)):
            total += len(item)
        elif isinstance(item, bool) or item is None:
            total += 1
        elif isinstance(item, int):
            total += item.bit_length() // 3 + 1
        elif isinstance(item, (list, tuple, set, frozenset)):
            total += len(item)
            stack.extend(item)
        elif isinstance(item, dict):
            total += len(item)
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, Namespace):  # {% set ns.a = ... %}: what it holds
            attrs = getattr(item, "_Namespace__attrs", {})
            total += len(attrs)
            stack.extend(attrs.values())
        else:
            total += 1
    return total


def _check_size(size: int, what: str) -> None:
    if size > MAX_VALUE_SIZE:
        raise SandboxLimit(f"{what} of {size:,} characters (the sandbox limit is {MAX_VALUE_SIZE:,})")


def _check_result(value: Any, what: str) -> None:
    """A value already built (a call's or a filter's result): only whether it is over the limit is known."""
    if isinstance(value, (str, bytes, list, tuple, dict)) and size_of(value) > MAX_VALUE_SIZE:
        raise SandboxLimit(f"{what} of more than {MAX_VALUE_SIZE:,} characters (the sandbox limit)")


def _check_int(value: Any, what: str) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        raise SandboxLimit(f"{what} of {value.bit_length():,} bits (the sandbox limit is {MAX_INT_BITS})")


def _int_arg(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def limited_range(*args: int) -> range:
    """range() as templates see it: at most MAX_RANGE items."""
    rng = range(*args)
    if len(rng) > MAX_RANGE:
        raise SandboxLimit(f"range() of {len(rng):,} items (the sandbox limit is {MAX_RANGE:,})")
    return rng


def _counted(iterable: Iterable[Any], charge: int = 0) -> Iterator[Any]:
    """A loop's iterable, counting iterations and charging the body's literal text for each."""
    budget = _budget()
    for item in iterable:
        budget.iteration()
        if charge:
            budget.produce(charge)
        yield item


_PERCENT = re.compile(r"%(?:\([^)]*\))?[-+ #0]*(\*|\d+)?(?:\.(\*|\d+))?")


def _check_percent(fmt: str, args: Any) -> None:
    """'%1000000s' % x: the widths and precisions a %-format asks for."""
    for match in _PERCENT.finditer(fmt):
        for part in match.groups():
            if part == "*":
                values = args if isinstance(args, tuple) else (args,)
                wanted = max((_int_arg(v) for v in values), default=0)
            else:
                wanted = int(part) if part and len(part) < 12 else (0 if not part else MAX_VALUE_SIZE + 1)
            _check_size(wanted, "a %-format width")


def _check_format(fmt: str) -> None:
    """'{:>1000000}'.format(x): the widths and precisions a str.format spec asks for (nested specs refused)."""
    try:
        parsed = list(string.Formatter().parse(fmt))
    except ValueError:
        return  # str.format raises its own error
    for _, _, spec, _ in parsed:
        if not spec:
            continue
        if "{" in spec:
            raise SandboxLimit("a nested str.format spec (not allowed in the sandbox)")
        for number in re.findall(r"\d+", spec):
            _check_size(int(number) if len(number) < 12 else MAX_VALUE_SIZE + 1, "a str.format width")


def _check_replace(text: str, old: Any, new: Any, count: Any = -1) -> None:
    if not (isinstance(old, str) and isinstance(new, str)):
        return
    hits = len(text) + 1 if old == "" else text.count(old)
    if isinstance(count, int) and count >= 0:
        hits = min(hits, count)
    _check_size(len(text) + hits * max(0, len(new) - len(old)), "a replace() result")


def _check_str_method(text: str, method: str, args: tuple, kwargs: dict) -> None:
    """The str methods whose result can be far larger than their inputs."""
    values = list(args) + list(kwargs.values())
    if method in ("center", "ljust", "rjust", "zfill") and values:
        _check_size(_int_arg(values[0]), f"a {method}() width")
    elif method == "expandtabs":
        _check_size(len(text) + text.count("\t") * _int_arg(values[0] if values else 8), "an expandtabs() result")
    elif method == "replace" and len(values) >= 2:
        _check_replace(text, *values[:3])
    elif method == "join" and values:
        items = values[0]
        if isinstance(items, (list, tuple, str)):
            _check_size(size_of(items) + len(text) * max(0, len(items) - 1), "a join() result")
    elif method in ("format", "format_map"):
        _check_format(text)


def _check_binop(operator: str, left: Any, right: Any) -> None:
    sequences = (str, bytes, list, tuple)
    if operator == "*":
        if isinstance(left, sequences) or isinstance(right, sequences):
            seq, times = (left, right) if isinstance(left, sequences) else (right, left)
            _check_size(size_of(seq) * max(0, _int_arg(times)), "a repeated string or list")
        elif _int_arg(left) and _int_arg(right):
            bits = left.bit_length() + right.bit_length()
            if bits > MAX_INT_BITS:
                raise SandboxLimit(f"an integer of about {bits:,} bits (the sandbox limit is {MAX_INT_BITS})")
    elif operator == "**":
        base, power = _int_arg(left), _int_arg(right)
        if abs(base) > 1 and power > 0:
            bits = (abs(base).bit_length() - 1) * power
            if bits > MAX_INT_BITS:
                raise SandboxLimit(f"an integer of about {bits:,} bits (the sandbox limit is {MAX_INT_BITS})")
    elif operator == "+":
        if isinstance(left, sequences) and isinstance(right, sequences):
            _check_size(size_of(left) + size_of(right), "a concatenation")
    elif operator == "%" and isinstance(left, str):
        _check_percent(left, right)


# filters that can make their result far larger than their input: (name -> check(value, *args, **kwargs))
def _filter_center(value: Any, width: Any = 80, *_: Any, **__: Any) -> None:
    _check_size(_int_arg(width), "a center width")


def _filter_indent(value: Any, width: Any = 4, *_: Any, **__: Any) -> None:
    lines = str(value).count("\n") + 1
    step = len(width) if isinstance(width, str) else _int_arg(width)
    _check_size(len(str(value)) + lines * step, "an indent() result")


def _filter_format(value: Any, *args: Any, **kwargs: Any) -> None:
    if isinstance(value, str):
        _check_percent(value, args or kwargs)


def _filter_replace(value: Any, old: Any = "", new: Any = "", count: Any = None, *_: Any) -> None:
    if isinstance(value, str):
        _check_replace(value, old, new, -1 if count is None else count)


def _filter_wordwrap(value: Any, width: Any = 79, break_long_words: Any = True, wrapstring: Any = None,
                     *_: Any, **kwargs: Any) -> None:
    wrap = kwargs.get("wrapstring", wrapstring) or "\n"
    text = str(value)
    _check_size(len(text) + (len(text) // max(1, _int_arg(kwargs.get("width", width))) + 1) * len(str(wrap)),
                "a wordwrap() result")


def _filter_join(value: Any, d: Any = "", *_: Any, **__: Any) -> None:
    if isinstance(value, (list, tuple, str)):
        _check_size(size_of(value) + len(str(d)) * max(0, len(value) - 1), "a join() result")


def _filter_count(value: Any, count: Any = 0, *_: Any, **__: Any) -> None:
    _check_size(_int_arg(count), "a batch/slice count")


_FILTER_CHECKS: dict[str, Any] = {
    "center": _filter_center, "indent": _filter_indent, "format": _filter_format, "replace": _filter_replace,
    "join": _filter_join, "wordwrap": _filter_wordwrap, "batch": _filter_count, "slice": _filter_count}


def _guarded_filter(name: str, func: Any) -> Any:
    from jinja2.utils import _PassArg

    skip = 1 if _PassArg.from_obj(func) is not None else 0
    check = _FILTER_CHECKS.get(name)

    def guarded(*args: Any, **kwargs: Any) -> Any:
        own = args[skip:]
        if check is not None and own:
            value = own[0]
            if name == "join" and not isinstance(value, (list, tuple, str, dict)):
                value = list(_counted(value))  # a generator: materialised (counted) to size it
                args = args[:skip] + (value,) + own[1:]
            check(value, *own[1:], **kwargs)
        result = func(*args, **kwargs)
        _check_result(result, f"the result of filter '{name}'")
        return result

    return update_wrapper(guarded, func)


def _charge(size: int) -> str:
    _budget().produce(size)
    return ""


def _concat(*parts: Any) -> str:
    texts = [str(p) for p in parts]
    _check_size(sum(len(t) for t in texts), "a ~ concatenation")
    return "".join(texts)


def _literal_size(body: list[nodes.Node]) -> int:
    """The literal text a body writes each time it runs (nested bodies included: an overestimate, never less)."""
    total = 0
    for top in body:
        for node in (top, *top.find_all((nodes.TemplateData, nodes.Const))):
            if isinstance(node, nodes.TemplateData):
                total += len(node.data)
            elif isinstance(node, nodes.Const) and isinstance(node.value, str):
                total += len(node.value)
    return total


def _call(name: str, *args: nodes.Expr, lineno: int) -> nodes.Call:
    return nodes.Call(nodes.EnvironmentAttribute(name, lineno=lineno), list(args), [], None, None, lineno=lineno)


class _Limits(NodeTransformer):
    """Rewrites a parsed template so that the limits apply: loop iterables counted, loop and macro bodies
    charged with their literal text, `~` a checked join."""

    def _charged(self, node: Any) -> Any:
        node = self.generic_visit(node)
        node.body.insert(0, nodes.Output([_call("gsg_charge", nodes.Const(_literal_size(node.body)),
                                                lineno=node.lineno)], lineno=node.lineno))
        return node

    def visit_For(self, node: Any) -> Any:
        if node.recursive:  # loop(children) re-enters the body: it charges itself on each run
            node = self._charged(node)
            charge = 0
        else:  # cheaper: the counting iterator charges each iteration (no call per iteration)
            node = self.generic_visit(node)
            charge = _literal_size(node.body)
        node.iter = _call("gsg_loop", node.iter, nodes.Const(charge), lineno=node.lineno)
        return node

    visit_Macro = visit_CallBlock = _charged

    def visit_Concat(self, node: Any) -> Any:
        node = self.generic_visit(node)
        return _call("gsg_concat", *node.nodes, lineno=node.lineno)


def _count_output(value: Any) -> Any:
    """finalize: every {{ }} value, in the output or in a buffer, counts towards MAX_PRODUCED_CHARS."""
    _budget().produce(size_of(value, MAX_PRODUCED_CHARS))
    return value


class LimitedSandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox (no list.append or dict.update either) with the limits of this module."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, **kwargs: Any):
        super().__init__(finalize=_count_output, **kwargs)
        self.globals["range"] = limited_range
        self.globals.pop("lipsum", None)  # lipsum(n) writes n paragraphs
        self.filters = {name: _guarded_filter(name, func) for name, func in self.filters.items()}
        self.gsg_loop = _counted
        self.gsg_charge = _charge
        self.gsg_concat = _concat

    def _generate(self, source: nodes.Template, name: str | None, filename: str | None,
                  defer_init: bool = False) -> str:
        return super()._generate(_Limits().visit(source), name, filename, defer_init)

    def _load_template(self, name: str, globals: Any) -> Any:
        _budget().load(name)
        return super()._load_template(name, globals)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _check_binop(operator, left, right)
        result = super().call_binop(context, operator, left, right)
        _check_int(result, "an integer")
        return result

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        if __obj is _charge or __obj is _counted or __obj is _concat:  # the limits' own hooks: not a call level
            return super().call(__context, __obj, *args, **kwargs)
        budget = _budget()
        target = getattr(__obj, "__wrapped__", __obj)  # the sandbox wraps str.format
        owner = getattr(target, "__self__", None)
        if isinstance(owner, str):
            _check_str_method(owner, getattr(target, "__name__", ""), args, kwargs)
        if isinstance(__obj, LoopContext) and args:  # a recursive loop's loop(children)
            args = (_counted(args[0]),) + args[1:]
        if isinstance(owner, str) and getattr(target, "__name__", "") == "join" and args and \
                not isinstance(args[0], (list, tuple, str)):
            args = (list(_counted(args[0])),) + args[1:]  # a generator: materialised (counted) to size it
            _check_str_method(owner, "join", args, kwargs)
        if isinstance(__obj, Macro):
            budget.macro_calls += 1
            if budget.macro_calls > MAX_MACRO_CALLS:
                raise SandboxLimit(f"more than {MAX_MACRO_CALLS:,} macro calls (the sandbox limit)")
        budget.depth += 1
        try:
            if budget.depth > MAX_CALL_DEPTH:
                raise SandboxLimit(f"calls nested more than {MAX_CALL_DEPTH} deep (the sandbox limit): does a "
                                   "macro call itself?")
            result = super().call(__context, __obj, *args, **kwargs)
        finally:
            budget.depth -= 1
        _check_result(result, "a call result")
        _check_int(result, "an integer")
        return result
