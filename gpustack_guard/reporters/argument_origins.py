"""The comment `gsg render` writes above each YAML document: where every backend argument comes from, and
what GPUStack's worker adds on top (never sent: the worker derives it from the GPUs it was given)."""

from __future__ import annotations

from gpustack_guard.core import args as A
from gpustack_guard.core import echo
from gpustack_guard.core.deploy.injection import WORKER_LABEL, for_spec
from gpustack_guard.core.render import RenderedSpec
from gpustack_guard.core.secrets import MASK, is_secret_flag, masked_value


def origin_comment(rendered: RenderedSpec) -> str:
    """'# '-prefixed lines, or '' for a backend gsg knows no worker arguments of."""
    injection = for_spec(rendered)
    if not injection.arguments:
        return ""
    try:
        own = {a.key for a in A.parse(rendered.spec.backend_parameters, rendered.family)}
    except A.ArgError:
        own = set()
    pinned = set(rendered.pinned)
    groups: dict[str, list[str]] = {"spec": [], "template, pinned": [], "template, default": []}
    for arg in rendered.args:
        group = "spec" if arg.key in own and arg.key not in pinned else \
            "template, pinned" if arg.key in pinned else "template, default"
        groups[group].append(_masked(arg, rendered).render())
    template = rendered.spec.guard.template
    lines = [f"# {rendered.name}: backend arguments"]
    if rendered.template_source:
        lines.append(f"#   template {template}: {rendered.template_source}")
    for group, shown in groups.items():
        if shown:
            label = group.replace("template", f"template {template}") if template else group
            lines.append(f"#   {label}: {' '.join(shown)}")
    lines.append(f"#   {WORKER_LABEL} (not in this document):")
    lines += [f"#     {a.render()}  ({a.why}; {a.source})" for a in injection.arguments]
    if rendered.family == "sglang" and "mem-fraction-static" not in rendered.flags:
        lines.append("#     --mem-fraction-static=<the fraction GPUStack books>  (unset; "
                     "gpustack/worker/backends/sglang.py _build_command_args)")
    if injection.refusal:
        lines.append(f"#   the worker refuses this layout: {injection.refusal}")
    return "\n".join(echo.escape(line) for line in lines) + "\n"  # an argument's newline cannot end the comment


def _masked(arg: A.Arg, rendered: RenderedSpec) -> A.Arg:
    """The argument as the comment shows it: a secret flag's values masked, each of several shown apart."""
    if arg.value is None:
        return arg
    secret = is_secret_flag(arg.key, set(rendered.secret_flags))
    values = tuple(MASK if secret else masked_value(value) for value in arg.values)
    return A.Arg(arg.key, MASK if secret else masked_value(arg.value), arg.index, values)
