"""From a checked spec to the document GPUStack receives: template arguments merged, env resolved."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from typing import Any

from gpustack_guard.core import args as A
from gpustack_guard.core import echo
from gpustack_guard.core import engine_flags as EF
from gpustack_guard.core import findings as F
from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.memory.facts import ModelFacts, bound_to_vllm
from gpustack_guard.core.memory.max_len import allow_long_max_model_len
from gpustack_guard.core.memory.profiles import DEFAULT_VERSIONS
from gpustack_guard.core.ports import TemplateError, TemplateOutput, TemplateRenderer
from gpustack_guard.core.records import copy_json
from gpustack_guard.core.rules import documents as D
from gpustack_guard.core.secrets import (
    MASK,
    extra_names,
    is_secret_flag,
    mask_args,
    masked,
    masked_value,
    resolve_env,
    secret_arg_values,
)
from gpustack_guard.core.spec.check import SpecDoc
from gpustack_guard.core.spec.model import GPUSTACK_FIELD_ORDER, DeploymentSpec, OllamaAliases, Workload


# identity equality: cheaper to define, never compared or hashed; __init__ written below (speed)
@dataclass(frozen=True, eq=False, repr=False, init=False)
class RenderedSpec:
    """The render stage's result for one spec (immutable; the document cache only memoises)."""

    __repr__ = fields_repr

    doc: SpecDoc
    spec: DeploymentSpec
    family: str
    args: tuple[A.Arg, ...]
    env: Mapping[str, str]
    secret_keys: frozenset[str] = frozenset()
    facts: ModelFacts | None = None
    facts_error: str | None = None
    pinned: tuple[str, ...] = ()  # flags the template pins (drift calls out hand edits of these first)
    unresolved_env: tuple[str, ...] = ()  # ${NAME} references with no value in the environment (apply refuses)
    secret_flags: frozenset[str] = frozenset()  # flags guard.secrets adds to the ones named like secrets
    template_source: str | None = None  # the template file used (gsg render shows it)
    # True when no argument may hold a secret (_may_hold_secret_any), guard.secrets aside; False: not known, ask
    args_plain: bool = False
    _documents: dict = field(default_factory=dict, init=False, repr=False, compare=False)  # built once each
    # spec.name, kept beside the spec: the rules, placement and estimation read it ~5 times a spec (10,000 specs,
    # a set of names: ~0.5 us a read as a property, ~0.2 as an attribute; fourteenth round)
    name: str = field(init=False, repr=False, compare=False)

    def __init__(self, doc: SpecDoc, spec: DeploymentSpec, family: str, args: tuple[A.Arg, ...],
                 env: Mapping[str, str], secret_keys: frozenset[str] = frozenset(), facts: ModelFacts | None = None,
                 facts_error: str | None = None, pinned: tuple[str, ...] = (), unresolved_env: tuple[str, ...] = (),
                 secret_flags: frozenset[str] = frozenset(), template_source: str | None = None,
                 args_plain: bool = False):
        # The fields above, in their order. The instance's dict is written once rather than field by field through
        # object.__setattr__, as the frozen class's generated __init__ does: one per spec, ~2.0 -> ~0.7 us
        # (docs/performance.md fourteenth round; tests/core/rules/test_render_round14.py pins the fields)
        object.__setattr__(self, "__dict__", {
            "doc": doc, "spec": spec, "family": family, "args": args, "env": env, "secret_keys": secret_keys,
            "facts": facts, "facts_error": facts_error, "pinned": pinned, "unresolved_env": unresolved_env,
            "secret_flags": secret_flags, "template_source": template_source, "args_plain": args_plain,
            "_documents": {}, "name": spec.name})

    @property
    def flags(self) -> dict[str, str | None]:
        return dict(self._flags)  # a copy: callers may change theirs

    @cached_property  # placement, estimation and the rules ask ~8 times per spec; the arguments never change
    def _flags(self) -> dict[str, str | None]:
        return A.as_dict(self.args, self.family)

    @property
    def secret_values(self) -> list[str]:
        from_env = [self.env[k] for k in self.secret_keys if k in self.env]
        # an argument renders as --KEY[=VALUE], so secret_arg_values finds a value only when a key is a secret
        # flag or a value is a URL or token: asking first skips rendering the arguments of nearly every spec
        # (~1.6 us a spec)
        if not self._args_may_hold_secret():
            return from_env
        return from_env + secret_arg_values(A.render(self.args), self.secret_flags)

    def _args_may_hold_secret(self) -> bool:
        extra = self.secret_flags
        if extra and any(is_secret_flag(arg.key, extra) for arg in self.args):
            return True
        return not self.args_plain and _may_hold_secret_any(self.args)

    def parallel_size(self) -> tuple[int, int]:
        """(tp, pp) from the final arguments; 1 when unset or not applicable."""
        return self._parallel_size

    @cached_property  # placement asks once a spec, the evaluation and injections again; the arguments never change
    def _parallel_size(self) -> tuple[int, int]:
        # the kept flag map, not the copy `flags` hands out (docs/performance.md ninth round); kept itself since
        # the fourteenth (10,000 calls: 5.1 -> 3.6 ms)
        return A.parallel_size(self._flags, self.family)

    def gpus_per_replica(self) -> int:
        return gpus_per_replica(self.spec, self.family, self.parallel_size())

    def document(self, *, show_secrets: bool = False) -> dict[str, Any]:
        """The deployment document: the spec's own fields in GPUStack's order, arguments and env final.

        A fresh dict each call (callers may change it); built once per flavour, since specs are immutable.
        """
        if show_secrets not in self._documents:
            self._documents[show_secrets] = self._document(show_secrets)
        return copy_json(self._documents[show_secrets])

    def request_body(self, *, create: bool = False) -> dict[str, Any]:
        """The document as GPUStack's API takes it, secrets resolved: without cluster_name (callers send
        cluster_id) and, unless creating, without enable_model_route (a create-only field)."""
        dropped = ("cluster_name",) if create else ("cluster_name", "enable_model_route")
        return {k: v for k, v in self.document(show_secrets=True).items() if k not in dropped}

    def _document(self, show_secrets: bool) -> dict[str, Any]:
        data = self.spec.to_dict(mode="json", exclude_unset=True, exclude={"guard"})
        if self.args or "backend_parameters" in data:
            rendered = A.render(self.args)
            data["backend_parameters"] = rendered if show_secrets else mask_args(rendered, self.secret_flags)
        if self.env or "env" in data:
            data["env"] = dict(self.env) if show_secrets else masked(self.env, self.secret_keys)
        data.setdefault("enable_model_route", True)  # without a route the model 404s on /v1
        return {key: data[key] for key in GPUSTACK_FIELD_ORDER if key in data}


def _may_hold_secret_any(args: tuple[A.Arg, ...]) -> bool:
    """Whether any --KEY[=VALUE] may carry a secret: its flag is named like one, or its value is a URL or token
    (guard.secrets aside)."""
    return any(is_secret_flag(arg.key) or arg.value and masked_value(arg.value) != arg.value for arg in args)


def gpus_per_replica(spec: DeploymentSpec, family: str, parallel: tuple[int, int]) -> int:
    if spec.gpu_selector and spec.gpu_selector.gpus_per_replica:
        return spec.gpu_selector.gpus_per_replica
    if parallel[0] * parallel[1] > 1:
        return parallel[0] * parallel[1]
    ids = spec.gpu_selector.gpu_ids if spec.gpu_selector and spec.gpu_selector.gpu_ids else []
    if ids:
        return len(ids) if spec.replicas <= 1 else max(1, len(ids) // spec.replicas)
    return 1


class _Lazy(Mapping):
    """A mapping computed on first access: most templates never read `spec` or `model`, and dumping them
    for every one of a thousand specs is most of the rendering time."""

    def __init__(self, make):
        self._make, self._data = make, None

    def _get(self) -> dict:
        if self._data is None:
            self._data = self._make()
        return self._data

    def __getitem__(self, key):
        return self._get()[key]

    def __iter__(self):
        return iter(self._get())

    def __len__(self):
        return len(self._get())


@lru_cache(maxsize=1)
def _no_ollama() -> OllamaAliases:
    """The empty OllamaAliases record (immutable), built once: one per templated spec was ~2 us of validation."""
    return OllamaAliases()


@lru_cache(maxsize=1)
def _default_records() -> tuple[Workload, dict[str, Any], dict[str, Any]]:
    """The default Workload, and the dicts of it and of the empty OllamaAliases, made once."""
    return Workload(), Workload().flat_dict(), _no_ollama().flat_dict()


def _workload_and_ollama(spec: DeploymentSpec) -> tuple[dict[str, Any], dict[str, Any]]:
    """The context's `workload` and `ollama`: a fresh dict each, as to_dict makes it. Most specs leave both unset,
    so their dicts are copies of ones made once (two to_dict were ~1.7 of ~4.5 us a templated spec)."""
    workload, ollama = spec.guard.workload, spec.guard.ollama
    default_workload, default_workload_dict, no_ollama_dict = _default_records()
    # equal to the default record: every field None and no mix, so the same dict as its to_dict
    workload_dict = copy_json(default_workload_dict) if workload == default_workload else workload.to_dict()
    return workload_dict, dict(no_ollama_dict) if ollama is None else ollama.to_dict()


@lru_cache(maxsize=16)
def _unset_parallel_size(family: str) -> tuple[int, int]:
    """(tp, pp) with no arguments at all, per engine: a templated spec usually gives none of its own."""
    return A.parallel_size({}, family)


def template_context(spec: DeploymentSpec, family: str, spec_args: list[A.Arg],
                     facts: ModelFacts | None) -> dict[str, Any]:
    parallel = A.parallel_size(A.as_dict(spec_args), family) if spec_args else _unset_parallel_size(family)
    gpus = gpus_per_replica(spec, family, parallel)
    workload, ollama = _workload_and_ollama(spec)
    version = spec.backend_version or DEFAULT_VERSIONS.get(family)
    return {
        "spec": _Lazy(lambda: spec.to_dict(mode="json", exclude={"guard"})),
        "vars": spec.guard.vars,
        "model": _Lazy(lambda: (facts.as_dict() if facts else {}) | {"known": facts is not None}),
        "placement": {"gpus": gpus, "replicas": spec.replicas,
                      "gpu_ids": list(spec.gpu_selector.gpu_ids or []) if spec.gpu_selector else []},
        "backend": spec.effective_backend,
        "backend_version": version,
        "backend_version_pinned": spec.backend_version is not None,
        "ollama": ollama,
        "workload": workload,
    }


def _refused_values(doc: SpecDoc, spec: DeploymentSpec, family: str, spec_args: list[A.Arg],
                    pinned: list[A.Arg], defaults: list[A.Arg]) -> list[F.Finding]:
    """GSG016 for every numeric flag whose value the engine (of the spec's release) would refuse: the spec's own
    at their lines, the template's (pinned, or a default the spec leaves) at guard.template."""
    version = spec.backend_version or DEFAULT_VERSIONS.get(family)
    own = {arg.key for arg in spec_args}
    from_template = [arg for arg in pinned if arg.key not in own] + [arg for arg in defaults if arg.key not in own]
    found = []
    for arg in spec_args:
        error = EF.check(arg.key, arg.value, family, version)
        if error is not None:
            found.append(F.finding(D.ARG_VALUE, doc.at("backend_parameters", arg.index), str(error), spec=spec.name,
                                   severity=_severity(error)))
    for arg in from_template:
        error = EF.check(arg.key, arg.value, family, version)
        if error is not None:
            found.append(F.finding(D.ARG_VALUE, doc.at("guard", "template"),
                                   f"template '{spec.guard.template}' renders {error}", spec=spec.name,
                                   severity=_severity(error)))
    return found


def _severity(error: EF.FlagValueError) -> F.Severity | None:
    """A value the engine may still take (a plugin's method) is a warning; a refusal keeps the rule's error."""
    return F.Severity.WARNING if error.warning else None


def _unread_vars(doc: SpecDoc, template: str, given: Mapping[str, Any] | None,
                 read: frozenset[str] | None) -> list[F.Finding]:
    """GSG011 for each guard.vars key the template never reads (a misspelling would silently leave the
    template's default in place), at the key's line, with the closest name it reads."""
    if read is None or not given:
        return []
    found = []
    for key in given:
        if key in read:
            continue
        import difflib  # on a typo only: most runs never suggest (start-up)
        close = difflib.get_close_matches(str(key), sorted(read), n=1, cutoff=0.6)
        hint = f"; did you mean '{close[0]}'?" if close else (
            f"; it reads {', '.join(sorted(read))}" if read else "; it reads no vars")
        found.append(F.finding(D.TEMPLATE, doc.at("guard", "vars", key, key=True),
                               f"guard.vars.{echo.value(key)} is not read by template '{echo.value(template)}', "
                               f"so it has no effect{hint}",
                               spec=doc.spec.name if doc.spec else None,
                               fix=f"rename it to {close[0]}" if close else "remove it"))
    return found


# What YAML (1.1, as gsg and GPUStack read it) takes for the end of a line: LF, CR, NEL, LS and PS
_YAML_LINE_BREAKS = ("\n", "\r", "\x85", "\u2028", "\u2029")


_ASCII_LINE_BREAK = re.compile("[\n\r]")  # the ASCII ones: a class past Latin-1 is ~2.4 M instructions to compile


@cache
def _any_line_break() -> re.Pattern[str]:
    return re.compile("[" + "".join(_YAML_LINE_BREAKS) + "]")


def _line_break(text: str) -> str | None:
    found = (_ASCII_LINE_BREAK if text.isascii() else _any_line_break()).search(text)
    return found.group() if found else None


def _flat_and_one_line(given: Mapping[str, Any]) -> bool:
    """The usual guard.vars: text keys, and values that are numbers or text, none with a line break (~1 us, where
    the walk below is ~17: 4,000 templated specs of the 10,000-spec tree)."""
    for key, value in given.items():  # isprintable() is False for every line break: the search runs only past it
        if type(key) is not str or not key.isprintable() and _line_break(key):
            return False
        kind = type(value)
        if kind is str:
            if not value.isprintable() and _line_break(value):
                return False
        elif kind is not int and kind is not float and kind is not bool and value is not None:
            return False
    return True


def _vars_with_line_breaks(doc: SpecDoc, template: str, given: Mapping[str, Any] | None) -> list[F.Finding]:
    """GSG011 for each text in guard.vars (a value, an item of a list, a key of a mapping, at any depth) that holds
    a line break. A template writes the values it reads into YAML text: `kv_cache_dtype: "auto\\n  - --x=1"`
    would write a pinned argument of its own (a second --gpu-memory-utilization past the one the template pins,
    unseen by the pinned-conflict check). The value is not shown: it may be a secret."""
    if not given or _flat_and_one_line(given):
        return []
    found = []
    # (path, value, whether the value is the path's last key): keys are written as text as well
    pending: list[tuple[tuple, Any, bool]] = [(("guard", "vars"), given, False)]
    while pending:
        path, value, is_key = pending.pop()
        if isinstance(value, dict):
            pending += [((*path, key), item, False) for key, item in value.items()]
            pending += [((*path, key), key, True) for key in value]
        elif isinstance(value, list):
            pending += [((*path, index), item, False) for index, item in enumerate(value)]
        elif isinstance(value, str) and (char := _line_break(value)):
            dotted = ".".join(echo.value(str(part)) for part in path)
            found.append(F.finding(D.TEMPLATE, doc.at(*path, key=is_key),
                                   f"{dotted} holds a line break (U+{ord(char):04X}): "
                                   f"template '{echo.value(template)}' writes it into YAML text, where it would "
                                   "start a line of its own (an argument or key the template does not write)",
                                   spec=doc.spec.name if doc.spec else None,
                                   fix="write the value on one line (several values: a YAML list)"))
    return sorted(found, key=lambda f: (f.location.line, f.location.column, f.message))


def _template_argument_findings(doc: SpecDoc, template: str, pinned: list[A.Arg], defaults: list[A.Arg],
                                family: str, secret_flags: set[str]) -> list[F.Finding]:
    """GSG013 and GSG014 for arguments the template renders, at the spec's guard.template line."""
    name = doc.spec.name if doc.spec else None
    found: list[tuple[F.Rule, str, str]] = []  # (rule, message, fix): the line is looked up only when one is found
    for arg in pinned + defaults:
        if arg.key in A.FORBIDDEN:
            found.append((D.FORBIDDEN_ARG, f"template '{template}' renders --{arg.key}, which is "
                          f"rejected by GPUStack: {A.FORBIDDEN[arg.key]}", f"remove --{arg.key} from the template"))
    for part in (pinned, defaults):
        for first, later in A.duplicates(part, family):
            hide = is_secret_flag(later.key, secret_flags)
            found.append((D.DUPLICATE_ARG, f"template '{template}' renders --{later.key} twice "
                          f"('{MASK if hide else first.value}' and '{MASK if hide else later.value}'); "
                          "the last one wins", "keep one in the template"))
    if not found:
        return []
    where = doc.at("guard", "template")
    return [F.finding(rule, where, message, spec=name, fix=fix) for rule, message, fix in found]


def _gpu_layers_admission(where: F.Location, spec, arg: A.Arg) -> list[F.Finding]:
    """GPUStack's own check of --gpu-layers / -ngl before anything runs (a 400 on create and update)."""
    value = arg.value or ""
    if not (value.isascii() and value.isdigit()) or int(value) > A.MAX_GPU_LAYERS:
        return [F.finding(D.FORBIDDEN_ARG, where, f"--{arg.key} '{echo.value(value)}' is rejected by GPUStack: its "
                          f"admission check accepts only a whole number 0-{A.MAX_GPU_LAYERS} (whatever the engine "
                          "itself would accept)", spec=spec.name, fix=f"write --{arg.key}={A.MAX_GPU_LAYERS} for all "
                          "layers")]
    if int(value) == 0 and spec.gpu_selector and spec.gpu_selector.gpu_ids:
        return [F.finding(D.FORBIDDEN_ARG, where, f"--{arg.key} 0 with gpu_selector.gpu_ids is rejected by GPUStack: "
                          "0 layers runs on the CPU only, so no GPU can be selected", spec=spec.name,
                          fix="remove gpu_selector.gpu_ids, or offload layers to the GPUs")]
    return []


def _shown(arg: A.Arg, secret_flags: set[str]) -> str:
    """An argument as a message may print it: a secret flag's value masked."""
    return f"--{arg.key}={MASK}" if arg.value is not None and is_secret_flag(arg.key, secret_flags) else arg.render()


# The argument work of specs that rendered without a finding, by everything it reads (_clean_key): specs in a big
# repository repeat the same arguments and template output, and a spec that shares them with a clean one is clean
# and ends with the same arguments. Speed only (issue 34, benchmarks/scale.py); a spec with findings is never kept.
MAX_CLEAN_ARGUMENTS_KEPT = 4096
# an entry: the final arguments, the pinned keys, and _may_hold_secret_any of the arguments, asked once per entry
# rather than once per spec by the report (10,000 specs: secret_values ~2.0 -> ~0.5-0.9 us a spec, fourteenth round)
_CLEAN_ARGUMENTS: dict[tuple, tuple[tuple[A.Arg, ...], tuple[str, ...], bool]] = {}


def _clean_key(spec: DeploymentSpec, family: str, output: TemplateOutput | None) -> tuple:
    """Everything the argument checks and the merge read besides the spec's name (messages only) and its
    file:lines: the engine and release, the spec's own arguments, whether it lists gpu_ids (GPUStack refuses
    --gpu-layers 0 with them), the template, what it rendered, and the guard.vars keys (GSG011)."""
    params = tuple(spec.backend_parameters) if spec.backend_parameters is not None else None
    has_gpu_ids = bool(spec.gpu_selector and spec.gpu_selector.gpu_ids)
    var_keys = tuple(spec.guard.vars) if spec.guard.vars else ()
    return (family, spec.backend_version, params, has_gpu_ids, spec.guard.template, output, var_keys)


def _known_clean(spec: DeploymentSpec, family: str, renderer: TemplateRenderer, facts: ModelFacts | None
                 ) -> tuple[tuple | None, TemplateOutput | None]:
    """The spec's clean-arguments key and its template's output; (None, None) when either cannot be had here
    (an argument or template error: the full path reports it, in its order)."""
    try:
        spec_args = A.parse(spec.backend_parameters, family, spec.backend_version)
    except A.ArgError:
        return None, None
    output = None
    if spec.guard.template:
        try:
            output = renderer.render(spec.guard.template, template_context(spec, family, spec_args, facts))
        except TemplateError:
            return None, None
    return _clean_key(spec, family, output), output


def render_spec(doc: SpecDoc, renderer: TemplateRenderer, facts: ModelFacts | None, facts_error: str | None,
                environ: Mapping[str, str]) -> tuple[RenderedSpec | None, list[F.Finding]]:
    spec = doc.spec
    assert spec is not None
    family = A.backend_family(spec.effective_backend, spec.is_gguf)
    env_extra, flag_extra = extra_names(spec.guard.secrets)
    if spec.guard.template and spec.guard.vars:  # before any rendering: what it renders is not the spec's
        broken = _vars_with_line_breaks(doc, spec.guard.template, spec.guard.vars)
        if broken:
            return None, broken
    rendered, found = _render_spec(doc, renderer, facts, facts_error, environ, family, env_extra, flag_extra)
    if rendered is not None and family == "llamacpp":
        refused = _refused_env(doc, rendered)
        if refused:
            return None, found + refused
    return rendered, found


def _refused_env(doc: SpecDoc, rendered: RenderedSpec) -> list[F.Finding]:
    """GSG016 for a LLAMA_ARG_ variable llama-server reads (no flag given) with a value it exits on, at the env
    key's line (the template's env at guard.template)."""
    from gpustack_guard.core.memory.engine import llamacpp_env_flags

    spec = rendered.spec
    try:
        llamacpp_env_flags(rendered.flags, dict(rendered.env), spec.backend_version, rendered.secret_keys)
    except EF.FlagValueError as exc:
        where = doc.at("env", exc.key) if exc.key in (spec.env or {}) else doc.at("guard", "template")
        return [F.finding(D.ARG_VALUE, where, str(exc), spec=spec.name)]
    return []


def _render_spec(doc: SpecDoc, renderer: TemplateRenderer, facts: ModelFacts | None, facts_error: str | None,
                 environ: Mapping[str, str], family: str, env_extra: set[str], flag_extra: set[str]
                 ) -> tuple[RenderedSpec | None, list[F.Finding]]:
    spec = doc.spec
    assert spec is not None
    key, output = _known_clean(spec, family, renderer, facts)
    known = _CLEAN_ARGUMENTS.get(key) if key is not None else None
    if known is not None:
        final_args, pinned_keys, args_plain = known
        return _rendered(doc, spec, family, final_args, pinned_keys, dict(output.env) if output else {},
                         (output.source or None) if output else None, env_extra, flag_extra, facts, facts_error,
                         environ, args_plain), []
    found: list[F.Finding] = []
    try:
        spec_args = A.parse(spec.backend_parameters, family, spec.backend_version)
    except A.ArgError as exc:
        return None, [F.finding(D.ARG_VALUE, doc.at("backend_parameters", exc.index), str(exc), spec=spec.name)]
    for arg in spec_args:
        if arg.key in A.FORBIDDEN:
            found.append(F.finding(D.FORBIDDEN_ARG, doc.at("backend_parameters", arg.index),
                                   f"--{arg.key} is rejected by GPUStack: {A.FORBIDDEN[arg.key]}",
                                   spec=spec.name, fix=f"remove --{arg.key}"))
        elif arg.key in A.GPU_LAYERS_NAMES:
            found.extend(_gpu_layers_admission(doc.at("backend_parameters", arg.index), spec, arg))
    for first, later in A.duplicates(spec_args, family):
        hide = is_secret_flag(later.key, flag_extra)
        one, other = ((MASK, MASK) if hide else  # a URL's password in a plain flag is masked too
                      tuple(echo.value(a.value if a.value is None else masked_value(a.value)) for a in (first, later)))
        found.append(F.finding(D.DUPLICATE_ARG, doc.at("backend_parameters", later.index),
                               f"--{later.key} is given twice ('{one}' and '{other}'); "
                               "the last one wins", spec=spec.name, fix="keep one"))

    pinned: list[A.Arg] = []
    defaults: list[A.Arg] = []
    template_env: dict[str, str] = {}
    template_source: str | None = None
    if spec.guard.template:
        try:
            if key is None:  # _known_clean met a template error: render again to report it in its order
                output = renderer.render(spec.guard.template, template_context(spec, family, spec_args, facts))
            assert output is not None
            pinned = A.parse(list(output.pinned), family, spec.backend_version)
            defaults = A.parse(list(output.defaults), family, spec.backend_version)
            template_env = dict(output.env)
            found += _unread_vars(doc, spec.guard.template, spec.guard.vars, output.variables)
            found += _template_argument_findings(doc, spec.guard.template, pinned, defaults, family, flag_extra)
            template_source = output.source or None
            if output.shadows:
                found.append(F.finding(D.TEMPLATE_SHADOWED, doc.at("guard", "template"),
                                       f"template '{spec.guard.template}' is {output.source}, which hides "
                                       f"{', '.join(output.shadows)}", spec=spec.name,
                                       fix="rename one of them, or delete the one you do not mean"))
        except TemplateError as exc:
            if exc.line:  # a line of the template: say which spec's guard.template rendered it
                return None, found + [F.finding(D.TEMPLATE, F.Location(exc.file, exc.line),
                                                f"{exc} (spec '{spec.name}', {doc.at('guard', 'template')})",
                                                spec=spec.name)]
            return None, found + [F.finding(D.TEMPLATE, doc.at("guard", "template"), str(exc), spec=spec.name)]
        except A.ArgError as exc:
            return None, found + [F.finding(D.TEMPLATE, doc.at("guard", "template"),
                                            f"template '{spec.guard.template}' renders a bad argument: {exc}",
                                            spec=spec.name)]
    final, conflicts = A.merge(pinned, defaults, spec_args, family)
    for arg in final:  # GPUStack checks what it is sent, the template's arguments too
        if arg.key in A.GPU_LAYERS_NAMES and arg not in spec_args:
            found.extend(_gpu_layers_admission(doc.at("guard", "template"), spec, arg))
    refused = _refused_values(doc, spec, family, spec_args, pinned, defaults)
    if refused:
        return None, found + refused  # no arithmetic on a value the engine refuses, nor on a default in its place
    for spec_arg, pinned_arg in conflicts:
        found.append(F.finding(
            D.PINNED_CONFLICT, doc.at("backend_parameters", spec_arg.index),
            f"{_shown(spec_arg, flag_extra)} contradicts {_shown(pinned_arg, flag_extra)} pinned by template "
            f"'{spec.guard.template}'", spec=spec.name, fix=f"remove it or set it to {_shown(pinned_arg, flag_extra)}"))
    pinned_keys = tuple(a.key for a in pinned)
    if not found and key is not None and len(_CLEAN_ARGUMENTS) < MAX_CLEAN_ARGUMENTS_KEPT:
        _CLEAN_ARGUMENTS[key] = (tuple(final), pinned_keys, not _may_hold_secret_any(tuple(final)))
    return _rendered(doc, spec, family, tuple(final), pinned_keys, template_env, template_source, env_extra,
                     flag_extra, facts, facts_error, environ), found


def _rendered(doc: SpecDoc, spec: DeploymentSpec, family: str, final: tuple[A.Arg, ...], pinned_keys: tuple[str, ...],
              template_env: dict[str, str], template_source: str | None, env_extra: set[str], flag_extra: set[str],
              facts: ModelFacts | None, facts_error: str | None, environ: Mapping[str, str],
              args_plain: bool = False) -> RenderedSpec:
    """The rendered spec from its final arguments: env resolved per spec (environ, secrets), facts bounded."""
    # unresolved references stay literal here (render and validate still work); apply refuses to send them
    env, secret_keys, missing = resolve_env({**template_env, **(spec.env or {})}, environ, env_extra)
    if family == "vllm" and facts is not None:
        facts = bound_to_vllm(facts, spec.backend_version, allow_long_max_model_len(env))
    return RenderedSpec(doc, spec, family, final, env, frozenset(secret_keys), facts, facts_error, pinned_keys,
                        tuple(missing), frozenset(flag_extra), template_source, args_plain)
