"""The `gsg` command line: thin adapters from typer options to command functions returning exit codes.

Exit codes: 0 clean, 1 findings at/above the fail level or a user error, 2 changes present (plan/drift with
--detailed-exitcode only), 4 a Degraded deployment and 6 both (drift with --detailed-exitcode), 3 internal error,
130 interrupted. Usage errors exit 1, never 2.
"""

# No `from __future__ import annotations` here: typer reads every command's annotations when it builds the
# command line (inspect.signature(eval_str=True), then typing.get_type_hints), and string annotations cost it an
# eval each and 34 compiled ForwardRefs a run; real annotation objects cost neither (docs/performance.md,
# sixteenth round: 16 commands' parameters 6.0 -> 3.3 ms).

import copy
import enum
import functools
import inspect
import os
import sys
from typing import Callable, List, Optional

import typer

try:  # typer >= 0.24 vendors click; older releases depend on it
    from typer._click import exceptions as click_exceptions
    from typer._click.globals import get_current_context as click_get_current_context
except ImportError:  # pragma: no cover - depends on the installed typer
    # the same names from the other place: mypy cannot take either import as the one definition
    from click import exceptions as click_exceptions  # type: ignore[no-redef]
    from click import get_current_context as click_get_current_context  # type: ignore[no-redef]

from gpustack_guard import __version__
from gpustack_guard.core.errors import EXIT_FAIL, EXIT_INTERRUPTED, EXIT_OK, GsgError
from gpustack_guard.reporters import AdviceFormat, ChangeFormat, DocumentFormat, ReportFormat, TableFormat


class FailLevel(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"

app = typer.Typer(
    name="gsg",
    context_settings={"help_option_names": ["-h", "--help"]},
    help="gpustack-guard: GPUStack deployments as code, checked by memory arithmetic before they OOM.",
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish, PowerShell
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

SPECS = typer.Argument(..., help="Spec files or folders (*.yaml, *.yml).", show_default=False, metavar="SPECS...")
OFFLINE = typer.Option(False, "--offline", envvar="GSG_OFFLINE",
                       help="Never ask the Hugging Face hub for model facts (catalog and local files only).")
TEMPLATES = typer.Option([], "--templates", metavar="DIR",
                         help="Extra template folder, searched before templates/ (repeatable).")
PROJECT = typer.Option(None, "--project", envvar="GSG_PROJECT", metavar="NAME",
                       help="The project these specs belong to (else gsg.yaml `project:` at the spec root).")
SELECT = typer.Option([], "--select", metavar="IDS",
                      help="Only these rules: ids, id prefixes or names, comma-separated (GSG03,GSG020); replaces "
                           "gsg.yaml `select`.")
IGNORE = typer.Option([], "--ignore", metavar="IDS",
                      help="Leave out these rules (comma-separated); adds to gsg.yaml `ignore`.")
OVERLAY = typer.Option(None, "--overlay", envvar="GSG_OVERLAY", metavar="NAME",
                       help="Apply SPECS/overlays/NAME over the specs (default: the context's overlay).")
CLUSTER = typer.Option(None, "--cluster", envvar="GSG_CLUSTER", metavar="NAME", help="Only this cluster.")

def _lock_wait(value: float) -> float:
    """--lock-timeout refused on parsing, before anything connects, within the lease's own ceiling (MAX_LOCK_WAIT;
    imported here, on use: the lease module brings the HTTP client)."""
    from gpustack_guard.adapters.gpustack.lease import checked_lock_wait

    return checked_lock_wait(value)


def _url_checked(ctx: typer.Context, param: typer.CallbackParam, value):
    """A URL option (or each of a repeated one) refused at parse time, as a usage error naming the option (or
    GSG_URL when it came from there), before anything connects: exit 1, one line, the URL masked."""
    urls = [] if value is None else value if isinstance(value, (list, tuple)) else [value]
    if not urls:  # click calls this for an absent option too: no URL module for a run without one (issue 34)
        return value
    from gpustack_guard.core.urls import bad_url

    for url in urls:
        problem = bad_url(url)
        if problem is not None:
            source = ctx.get_parameter_source(param.name) if param.name else None
            from_env = source is not None and source.name == "ENVIRONMENT" and isinstance(param.envvar, str)
            hint = str(param.envvar) if from_env else "/".join(f"'{o}'" for o in param.opts)
            raise typer.BadParameter(problem, ctx=ctx, param=param, param_hint=hint)
    return value


# The connection option group, added to every command that talks to a server by @connection_options.
CONNECTION_PARAMETERS = [
    inspect.Parameter("server", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[str], default=typer.Option(
        None, "--server", envvar="GSG_URL", metavar="URL", help="GPUStack server URL (GSG_URL).",
        callback=_url_checked)),
    inspect.Parameter("api_key_file", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[str], default=typer.Option(
        None, "--api-key-file", metavar="FILE", help="File holding the API key; else GSG_API_KEY. Never a bare flag "
                                                     "value.")),
    inspect.Parameter("ca_bundle", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[str], default=typer.Option(
        None, "--ca-bundle", metavar="FILE", help="CA bundle for the server's TLS certificate.")),
    inspect.Parameter("insecure", inspect.Parameter.KEYWORD_ONLY, annotation=bool, default=typer.Option(
        False, "--insecure", help="Do not verify the server's TLS certificate.")),
    inspect.Parameter("context", inspect.Parameter.KEYWORD_ONLY, annotation=Optional[str], default=typer.Option(
        None, "--context", envvar="GSG_CONTEXT", metavar="NAME",
        help="A named server of ~/.config/gsg/config.yaml (GSG_CONFIG): URL, key source, CA, defaults.")),
]


def connection_options(command: Callable[..., int]) -> Callable[..., int]:
    """Give a command the shared --server/--api-key-file/--ca-bundle/--insecure options as one
    `connection: ConnectionOptions` argument (typer reads the parameters from the signature)."""
    signature = inspect.signature(command)
    kept = [p for name, p in signature.parameters.items() if name != "connection"]

    @functools.wraps(command)
    def wrapper(*args, server=None, api_key_file=None, ca_bundle=None, insecure=False, context=None, **kwargs):
        from gpustack_guard.wiring import ConnectionOptions

        source = click_get_current_context().get_parameter_source("server")
        typed = source is not None and source.name == "COMMANDLINE"  # not GSG_URL: a named context outranks it
        return command(*args, connection=ConnectionOptions(server, api_key_file, ca_bundle, insecure, context=context,
                                                           server_from_command_line=typed), **kwargs)

    wrapper.__signature__ = signature.replace(parameters=kept + CONNECTION_PARAMETERS)  # type: ignore[attr-defined]
    return wrapper


def _sources(specs, templates, offline, project=None, overlay=None, select=(), ignore=()):
    from gpustack_guard.wiring import spec_sources

    return spec_sources(specs, templates, offline, project, overlay, select, ignore)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"gsg {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit."),
          quiet: bool = typer.Option(False, "--quiet", "-q", envvar="GSG_QUIET",
                                     help="No progress or summary lines on stderr; errors and reports stay.")) -> None:
    """gpustack-guard (gsg)."""
    from gpustack_guard.adapters.files.output import set_quiet

    set_quiet(quiet)


@app.command()
@connection_options
def validate(
    specs: List[str] = SPECS,
    fleet: Optional[str] = typer.Option(None, "--fleet", "-f", envvar="GSG_FLEET",
                                        help="Fleet snapshot file (YAML/JSON) to validate against offline."),
    output: ReportFormat = typer.Option(ReportFormat.AUTO.value, "--output", "-o", envvar="GSG_OUTPUT",
                                        case_sensitive=False,
                                        help="auto picks github under GitHub Actions, text elsewhere."),
    fail_level: FailLevel = typer.Option(FailLevel.ERROR.value, "--fail-level", case_sensitive=False,
                                         help="Exit 1 on findings at or above this severity."),
    offline: bool = OFFLINE,
    templates: List[str] = TEMPLATES,
    overlay: Optional[str] = OVERLAY,
    server_check: bool = typer.Option(False, "--server-check",
                                      help="Also ask GPUStack's /v2/model-evaluations and compare its verdict."),
    report: List[str] = typer.Option([], "--report", metavar="FORMAT=FILE",
                                     help="Also write this run's report in FORMAT to FILE (repeatable), e.g. "
                                          "sarif=gsg.sarif."),
    select: List[str] = SELECT,
    ignore: List[str] = IGNORE,
    connection=None,
) -> int:
    """Check specs: schema and spelling, templates, placement and GPUStack admission, memory arithmetic."""
    from gpustack_guard.commands.validate import options_from, run

    return run(options_from(specs, fleet, output, fail_level.value, offline, templates, overlay, server_check, report,
                            select, ignore, connection))


@app.command()
def render(
    specs: List[str] = SPECS,
    output: DocumentFormat = typer.Option(DocumentFormat.YAML.value, "--output", "-o", case_sensitive=False),
    show_secrets: bool = typer.Option(False, "--show-secrets", help="Print secret env values instead of ********."),
    out_file: Optional[str] = typer.Option(None, "--out", metavar="FILE", help="Write to FILE instead of stdout."),
    check: bool = typer.Option(False, "--check", help="With --out: exit 1 when FILE is stale instead of writing."),
    offline: bool = OFFLINE,
    templates: List[str] = TEMPLATES,
    overlay: Optional[str] = OVERLAY,
) -> int:
    """Print the final deployment documents exactly as gsg would send them to GPUStack."""
    from gpustack_guard.commands.render import RenderOptions, run

    return run(RenderOptions(_sources(specs, templates, offline, overlay=overlay), output, show_secrets, out_file,
                             check))


class SchemaKind(str, enum.Enum):
    SPEC = "spec"
    OVERLAY = "overlay"
    WORKLOAD = "workload"
    PROJECT = "project"
    CONTEXTS = "contexts"


@app.command()
def schema(kind: SchemaKind = typer.Argument(SchemaKind.SPEC.value,
                                             metavar="[spec|overlay|workload|project|contexts]",
                                             case_sensitive=False)) -> int:
    """Print a JSON Schema (draft-07) for editors' YAML language servers and check-jsonschema: a spec document
    (default), an overlay document, a workloads file, the project file (gsg.yaml) or the contexts file."""
    import json

    from gpustack_guard.adapters.files.output import out

    if kind is SchemaKind.PROJECT:
        from gpustack_guard.adapters.files.project_file import project_schema

        out(json.dumps(project_schema(), indent=2) + "\n")
    elif kind is SchemaKind.CONTEXTS:
        from gpustack_guard.adapters.files.contexts import contexts_schema

        out(json.dumps(contexts_schema(), indent=2) + "\n")
    elif kind is SchemaKind.WORKLOAD:
        from gpustack_guard.core.advise.workload import workload_schema_text

        out(workload_schema_text())
    else:
        from gpustack_guard.core.spec.schema import schema_text

        out(schema_text(kind.value))
    return EXIT_OK


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def estimate(
    ctx: typer.Context,
    model: str = typer.Option(..., "--model", "-m", help="Catalog name, Hugging Face repo id, config.json or "
                                                         "GGUF path."),
    gpu_memory: str = typer.Option(..., "--gpu-memory", help="Memory of one GPU with a unit (23.58GiB, 24GB)."),
    gpus: Optional[int] = typer.Option(None, "--gpus", min=1, max=1024,
                                       help="GPUs per replica (default: tensor x pipeline parallel size)."),
    backend: str = typer.Option("vLLM", "--backend", help="vLLM | SGLang | llama.cpp"),
    backend_version: Optional[str] = typer.Option(None, "--backend-version", help="Engine version, e.g. 0.11.0."),
    gpu_name: str = typer.Option("", "--gpu-name", help="GPU model name (vLLM's defaults differ on A100)."),
    quantization: Optional[str] = typer.Option(None, "--quantization", "-q",
                                               help="Weights format of a catalog model: awq, gptq, fp8, int8, "
                                                    "bitsandbytes, or a GGUF type such as q4_k_m."),
    platform_footprint: Optional[str] = typer.Option(
        None, "--platform-footprint", help="llama.cpp: VRAM the runtime itself takes per GPU (GPUStack: 500MiB, "
                                           "gguf-parser's default: 250MiB)."),
    output: TableFormat = typer.Option(TableFormat.TEXT.value, "--output", "-o", case_sensitive=False),
    offline: bool = OFFLINE,
    fail_on: str = typer.Option("none", "--fail-on", help="Exit 1 when the verdict is a warning or an error: "
                                                          "none | warning | error."),
    env: List[str] = typer.Option([], "--env", metavar="KEY=VALUE",
                                  help="The deployment's env, e.g. VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (repeatable)."),
) -> int:
    """Per-GPU memory breakdown for one model, judged by validate's rules on one worker of these GPUs.
    Backend arguments follow `--`, as in backend_parameters."""
    from gpustack_guard.commands.estimate import EstimateOptions, FailOn, run

    try:
        fail = FailOn(fail_on.lower())
    except ValueError:
        raise GsgError(f"--fail-on must be none, warning or error, not '{fail_on}'") from None
    return run(EstimateOptions(model, gpu_memory, backend, tuple(ctx.args), gpus, backend_version, gpu_name,
                               quantization, platform_footprint, output, offline, fail, tuple(env)))


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
@connection_options
def verify(
    ctx: typer.Context,
    specs: Optional[List[str]] = typer.Argument(None, help="Spec files or folders: verify their running instances "
                                                           "live (instead of --log).", show_default=False,
                                                metavar="[SPECS]..."),
    log: Optional[str] = typer.Option(None, "--log", metavar="FILE",
                                      help="An engine's start-up log (vLLM, SGLang, llama.cpp)."),
    backend: Optional[str] = typer.Option(None, "--backend", help="vllm | sglang | llama.cpp (default: the engine "
                                                                  "whose lines the log holds)."),
    tolerance: float = typer.Option(5.0, "--tolerance", help="KV capacity difference, in percent, that fails."),
    output: str = typer.Option("text", "--output", "-o", help="text | json | markdown; live also sarif | junit | "
                                                              "github | gitlab | auto"),
    model: Optional[str] = typer.Option(None, "--model", "-m", help="The model, when the log's own name (a local "
                                                                     "path) is not known offline."),
    gpu_memory: Optional[str] = typer.Option(None, "--gpu-memory", help="One GPU's memory, when the log does not "
                                                                        "print it (vLLM V1)."),
    gpu_name: str = typer.Option("", "--gpu-name", help="GPU model name (vLLM's defaults differ by GPU)."),
    backend_version: Optional[str] = typer.Option(None, "--backend-version", help="When the log does not print it."),
    quantization: Optional[str] = typer.Option(None, "--quantization",
                                               help="Weights format when --model names the unquantized model "
                                                    "(fp8, awq, gptq, int8, ...); a llama.cpp log's GGUF file "
                                                    "type is read when it is not given."),
    record: Optional[str] = typer.Option(None, "--record", metavar="DIR",
                                         help="Also write what the log showed as a test vector (JSON) into DIR."),
    source: Optional[str] = typer.Option(None, "--source", metavar="TEXT",
                                         help="Where the log is from (a URL), kept in the recorded vector."),
    env: List[str] = typer.Option([], "--env", metavar="KEY=VALUE",
                                  help="With --log: the deployment's env the log does not print, e.g. "
                                       "VLLM_USE_FLASHINFER_SAMPLER=0 (repeatable; a line the log prints wins)."),
    fail_level: FailLevel = typer.Option(FailLevel.WARNING.value, "--fail-level", case_sensitive=False,
                                         help="Live: the finding severity that fails the run."),
    project: Optional[str] = PROJECT,
    offline: bool = OFFLINE,
    templates: List[str] = TEMPLATES,
    overlay: Optional[str] = OVERLAY,
    select: List[str] = SELECT,
    ignore: List[str] = IGNORE,
    connection=None,
) -> int:
    """Hold engines' start-up logs against gsg's estimate: one log (--log FILE), term by term, or every running
    instance of the deployments SPECS own on the server (KV tokens and headroom, GSG044/GSG045). Exit 1 when the
    verdicts differ, KV capacity is off by more than the tolerance, or (live) an instance cannot be verified.
    With --log, backend arguments the log does not print (its command line) follow `--`; one the log prints wins."""
    after = list(_ARGS_AFTER_DASHES)  # click hands what follows `--` to SPECS: they are --log's command line
    given = list(specs or [])
    if after and given[-len(after):] == after:
        given = given[:-len(after)]
    if given and log:
        raise GsgError("give SPECS (verify the running instances live) or --log FILE (one log), not both")
    if given:
        if after or ctx.args:
            raise GsgError("backend arguments after `--` go with --log FILE, not with SPECS")
        if env:
            raise GsgError("--env goes with --log FILE; a live verify reads each deployment's env from its spec")
        return _verify_live(given, output, tolerance, fail_level, _sources(given, templates, offline, project,
                                                                           overlay, select, ignore), connection)
    if select or ignore:
        raise GsgError("--select/--ignore go with SPECS (the live verify's findings), not with --log FILE")
    if not log:
        raise GsgError("nothing to verify: give SPECS (live, against --server) or --log FILE")
    from gpustack_guard.commands.verify import VerifyFormat, VerifyOptions, run

    try:
        chosen = VerifyFormat(output.lower())
    except ValueError:
        raise GsgError(f"--output must be text, json or markdown, not '{output}'") from None
    return run(VerifyOptions(log, backend, tolerance, chosen, model, gpu_memory, gpu_name, backend_version,
                             quantization, tuple(after + list(ctx.args)), record=record, source=source,
                             env=tuple(env)))


def _verify_live(specs, output: str, tolerance: float, fail_level: FailLevel, sources, connection) -> int:
    from gpustack_guard.commands.verify_live import LiveVerifyOptions, run
    from gpustack_guard.core.findings import Severity

    formats = [f.value for f in ReportFormat if f is not ReportFormat.HTML]
    if output.lower() not in formats:
        raise GsgError(f"--output must be one of {', '.join(formats)}, not '{output}'")
    return run(LiveVerifyOptions(sources, connection, ReportFormat(output.lower()), tolerance,
                                 Severity(fail_level.value)))


@app.command()
@connection_options
def snapshot(
    out: str = typer.Option(..., "--out", metavar="FILE", help="Where to write the snapshot (YAML)."),
    cluster: Optional[str] = CLUSTER,
    connection=None,
) -> int:
    """Write the live fleet (clusters, workers, GPUs, instances) as a snapshot file for offline validation."""
    from gpustack_guard.commands.snapshot import SnapshotOptions, run

    return run(SnapshotOptions(connection, out, cluster))


@app.command(name="export")
@connection_options
def export_(
    out: str = typer.Option(..., "--out", metavar="DIR", help="Folder to write one spec file per model into."),
    cluster: Optional[str] = CLUSTER,
    show_secrets: bool = typer.Option(False, "--show-secrets", help="Write secret env values instead of ${NAME}."),
    force: bool = typer.Option(False, "--force", help="Replace existing spec files that differ."),
    connection=None,
) -> int:
    """Adopt live deployments: write them as spec files (server-filled fields stripped, secrets as references)."""
    from gpustack_guard.commands.export import ExportOptions, run

    return run(ExportOptions(connection, out, cluster, show_secrets, force))


PRUNE = typer.Option(False, "--prune", help="Delete this project's models that no spec declares (needs a project "
                                            "identity and the project's root folder).")
ADOPT = typer.Option(False, "--adopt", help="Take over live models of the same name that gsg does not own yet.")
CLAIM_LEGACY = typer.Option(False, "--claim-legacy",
                            help="Record this project in the legacy (path-only) markers of models the specs declare.")
TAKE_OVER = typer.Option(None, "--take-over-from", metavar="PROJECT",
                         help="Move models of a declared name from this other project to this one (repeatable).")
TARGET = typer.Option(None, "--target", metavar="NAME", help="Only these deployments (repeatable).")
ALLOW_EMPTY = typer.Option(False, "--allow-empty", help="Allow an empty spec set (with --prune: delete all).")


def _ownership(prune, adopt, claim_legacy, take_over_from):
    from gpustack_guard.wiring import Ownership

    return Ownership(prune, adopt, claim_legacy, tuple(take_over_from or ()))


def _option(name: str, annotation, default) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=annotation, default=default)


# plan's and apply's shared block of options, in --help order; the last three reach the command as they are
OWNERSHIP_PARAMETERS = [
    _option("prune", bool, PRUNE), _option("adopt", bool, ADOPT), _option("project", Optional[str], PROJECT),
    _option("claim_legacy", bool, CLAIM_LEGACY), _option("take_over_from", Optional[List[str]], TAKE_OVER),
    _option("target", Optional[List[str]], TARGET), _option("allow_empty", bool, ALLOW_EMPTY)]


def ownership_options(command: Callable[..., int]) -> Callable[..., int]:
    """Put OWNERSHIP_PARAMETERS where the command has its `ownership` parameter (its own `project`, `target`
    and `allow_empty` give way to them); the command gets --prune/--adopt/--claim-legacy/--take-over-from as
    one `ownership: Ownership` argument."""
    signature = inspect.signature(command)
    shared = {p.name for p in OWNERSHIP_PARAMETERS}
    parameters: list[inspect.Parameter] = []
    for name, parameter in signature.parameters.items():
        if name == "ownership":
            parameters += OWNERSHIP_PARAMETERS
        elif name not in shared:
            parameters.append(parameter)

    @functools.wraps(command)
    def wrapper(*args, prune=False, adopt=False, claim_legacy=False, take_over_from=None, **kwargs):
        return command(*args, ownership=_ownership(prune, adopt, claim_legacy, take_over_from), **kwargs)

    wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    return wrapper


@app.command()
@connection_options
@ownership_options
def plan(
    specs: List[str] = SPECS,
    output: ChangeFormat = typer.Option(ChangeFormat.TEXT.value, "--output", "-o", envvar="GSG_PLAN_OUTPUT",
                                        case_sensitive=False, help="markdown: a pull-request comment."),
    out_file: Optional[str] = typer.Option(None, "--out", metavar="FILE",
                                           help="Save the plan (JSON) for `gsg apply FILE`."),
    detailed_exitcode: bool = typer.Option(False, "--detailed-exitcode",
                                           help="Exit 0 no changes, 1 error, 2 changes present."),
    ownership=None, project=None, target=None, allow_empty=False,  # filled in by @ownership_options
    offline: bool = OFFLINE,
    templates: List[str] = TEMPLATES,
    overlay: Optional[str] = OVERLAY,
    select: List[str] = SELECT,
    ignore: List[str] = IGNORE,
    connection=None,
) -> int:
    """Show what apply would change: + create, ~ update, -/+ replace, - delete, ! conflict (validation first)."""
    from gpustack_guard.commands.plan import PlanOptions, run

    return run(PlanOptions(_sources(specs, templates, offline, project, overlay, select, ignore), connection,
                           ownership, output, out_file, detailed_exitcode, tuple(target or ()), allow_empty))


@app.command()
@connection_options
@ownership_options
def apply(
    specs: List[str] = typer.Argument(..., help="Spec files or folders, or one saved plan file (*.json).",
                                      show_default=False, metavar="SPECS_OR_PLAN..."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation (needed off a terminal)."),
    ownership=None, project=None, target=None, allow_empty=False,  # filled in by @ownership_options
    no_restart: bool = typer.Option(False, "--no-restart", help="Do not restart instances after an update."),
    wait: bool = typer.Option(False, "--wait", help="Wait until every changed deployment is ready; stop early "
                                                    "on an instance in error or restarting."),
    wait_timeout: float = typer.Option(900.0, "--wait-timeout", metavar="SECONDS", help="Give up waiting after."),
    concurrency: int = typer.Option(8, "--concurrency", min=1, max=256, help="Independent changes at once."),
    lock: bool = typer.Option(True, "--lock/--no-lock",
                              help="Hold the project's apply lock on the server while writing (a stopped model "
                                   "named gsg-lock-PROJECT)."),
    lock_timeout: float = typer.Option(0.0, "--lock-timeout", metavar="SECONDS", callback=_lock_wait,
                                       help="Wait this long for a lock another apply holds (at most an hour)."),
    offline: bool = OFFLINE,
    templates: List[str] = TEMPLATES,
    overlay: Optional[str] = OVERLAY,
    select: List[str] = SELECT,
    ignore: List[str] = IGNORE,
    connection=None,
) -> int:
    """Carry out the plan: deletes and scale-downs first, then updates (with restart), then creates."""
    from gpustack_guard.commands.apply import ApplyOptions, run

    return run(ApplyOptions(_sources(specs, templates, offline, project, overlay, select, ignore), connection,
                            ownership, yes, tuple(target or ()), allow_empty, not no_restart, wait, wait_timeout,
                            concurrency=concurrency, lock=lock, lock_timeout=lock_timeout))


@app.command()
@connection_options
def drift(
    specs: List[str] = SPECS,
    output: ChangeFormat = typer.Option(ChangeFormat.TEXT.value, "--output", "-o", metavar="FORMAT",
                                        case_sensitive=False),
    detailed_exitcode: bool = typer.Option(False, "--detailed-exitcode", help="Exit 2 when drift is found."),
    all_contexts: bool = typer.Option(False, "--all-contexts",
                                      help="Every context of the contexts file, one report, one exit code."),
    project: Optional[str] = PROJECT,
    offline: bool = OFFLINE,
    templates: List[str] = TEMPLATES,
    overlay: Optional[str] = OVERLAY,
    connection=None,
) -> int:
    """Read-only: live fields that differ from the specs, missing and orphaned models, unhealthy instances."""
    from gpustack_guard.commands.drift import DriftOptions, run

    return run(DriftOptions(_sources(specs, templates, offline, project, overlay), connection, output,
                            detailed_exitcode, all_contexts))


@app.command()
def templates(
    specs: Optional[List[str]] = typer.Argument(None, help="Spec folders whose templates/ are searched first.",
                                                show_default=False, metavar="[SPECS]..."),
    extra: List[str] = TEMPLATES,
    output: TableFormat = typer.Option(TableFormat.TEXT.value, "--output", "-o", case_sensitive=False),
) -> int:
    """List the guard templates: variables with defaults, what else they read, what they pin."""
    from gpustack_guard.commands.templates import TemplatesOptions, run

    return run(TemplatesOptions(tuple(specs or ()), tuple(extra), output))


config_app = typer.Typer(name="config", no_args_is_help=True, rich_markup_mode=None,
                         help="List, show and switch contexts (the named servers of ~/.config/gsg/config.yaml).")
app.add_typer(config_app)


@config_app.command("get-contexts")
def config_get_contexts(
    output: TableFormat = typer.Option(TableFormat.TEXT.value, "--output", "-o", case_sensitive=False),
) -> int:
    """Every context and its server (masked); the current one marked with *."""
    from gpustack_guard.commands.config import get_contexts

    return get_contexts(output)


@config_app.command("current-context")
def config_current_context() -> int:
    """The name of the current context."""
    from gpustack_guard.commands.config import current_context

    return current_context()


@config_app.command("use-context")
def config_use_context(name: str = typer.Argument(..., metavar="NAME", show_default=False)) -> int:
    """Make NAME the current context (the file's other lines and comments are kept)."""
    from gpustack_guard.commands.config import use_context

    return use_context(name)


@config_app.command("view")
def config_view(
    output: TableFormat = typer.Option(TableFormat.TEXT.value, "--output", "-o", case_sensitive=False),
) -> int:
    """The contexts as gsg reads them (paths resolved), server URLs masked."""
    from gpustack_guard.commands.config import view

    return view(output)


@app.command()
def catalog(
    output: TableFormat = typer.Option(TableFormat.TEXT.value, "--output", "-o", case_sensitive=False),
) -> int:
    """List the built-in model catalog (facts usable offline) and how names match it."""
    from gpustack_guard.commands.catalog import CatalogOptions, run

    return run(CatalogOptions(output))


@app.command()
def soak(
    url: str = typer.Option(..., "--url", metavar="URL", callback=_url_checked,
                            help="OpenAI-compatible endpoint: GPUStack's gateway, or vLLM/SGLang/llama.cpp directly."),
    model: str = typer.Option(..., "--model", metavar="NAME", help="Model name the endpoint serves."),
    rounds: int = typer.Option(6, "--rounds", metavar="N", help="Rounds of fixed load."),
    round_seconds: float = typer.Option(60.0, "--round-seconds", metavar="S", help="Length of a round."),
    concurrency: int = typer.Option(8, "--concurrency", metavar="C", help="Streams kept in flight."),
    workload: Optional[str] = typer.Option(None, "--workload", metavar="FILE",
                                           help="YAML list of {prompt_tokens, max_tokens, weight} to cycle."),
    prompt_tokens: int = typer.Option(512, "--prompt-tokens", metavar="N", help="Prompt length without --workload."),
    max_tokens: int = typer.Option(128, "--max-tokens", metavar="N", help="Output length without --workload."),
    metrics_url: List[str] = typer.Option([], "--metrics-url", metavar="URL", callback=_url_checked,
                                          help="Prometheus /metrics to sample every second (repeatable)."),
    pid: Optional[int] = typer.Option(None, "--pid", metavar="PID", help="Also sample this local process's RSS."),
    memory_limit: Optional[str] = typer.Option(None, "--memory-limit", metavar="SIZE",
                                               help="What the memory signal runs out at (e.g. 64GiB), for the "
                                                    "recycle projection."),
    reference_url: Optional[str] = typer.Option(None, "--reference-url", metavar="URL", callback=_url_checked,
                                                help="A second endpoint serving the same model: the control."),
    reference_model: Optional[str] = typer.Option(None, "--reference-model", metavar="NAME",
                                                  help="Its model name (default: --model)."),
    reference_metrics_url: List[str] = typer.Option([], "--reference-metrics-url", metavar="URL",
                                                    callback=_url_checked,
                                                    help="The reference's /metrics, charted beside ours."),
    out_dir: Optional[str] = typer.Option(None, "--out", metavar="DIR", help="Write soak.json and report.html."),
    output: str = typer.Option("text", "--output", "-o", metavar="FORMAT", help="text | json"),
    fail_on: str = typer.Option("failing", "--fail-on", metavar="LEVEL",
                                help="Exit 1 on: failing | degraded (any verdict but stable) | slo (failing, or "
                                     "--slo missed) | never."),
    seed: int = typer.Option(0, "--seed", metavar="N", help="Seed of the generated prompts."),
    round_requests: Optional[int] = typer.Option(None, "--round-requests", metavar="N",
                                                 help="At most N requests per round."),
    request_timeout: float = typer.Option(120.0, "--request-timeout", metavar="SECONDS", help="Per request."),
    api_key_file: Optional[str] = typer.Option(None, "--api-key-file", metavar="FILE",
                                               help="File holding the endpoint's API key; else GSG_API_KEY."),
    reference_api_key_file: Optional[str] = typer.Option(
        None, "--reference-api-key-file", metavar="FILE",
        help="File holding the reference's API key; else GSG_REFERENCE_API_KEY; else the endpoint's key, sent only "
             "when the reference has the endpoint's scheme, host and port."),
    ca_bundle: Optional[str] = typer.Option(None, "--ca-bundle", metavar="FILE", help="CA bundle of the endpoint."),
    insecure: bool = typer.Option(False, "--insecure", help="Do not verify the endpoint's TLS certificate."),
    observed: Optional[str] = typer.Option(None, "--observed", metavar="FILE",
                                           help="`gsg verify -o json` output or a recorded vector: the KV pool the "
                                                "engine allocated, shown beside the scraped one."),
    rate: Optional[float] = typer.Option(None, "--rate", metavar="R",
                                         help="Open loop: send R requests/s on a schedule instead of --concurrency "
                                              "streams."),
    arrival: Optional[str] = typer.Option(None, "--arrival", metavar="KIND",
                                          help="With --rate: poisson (default) or constant gaps."),
    warmup_rounds: int = typer.Option(0, "--warmup-rounds", metavar="N",
                                      help="Rounds run first (each sweep step too) and left out of the verdict."),
    slo: Optional[str] = typer.Option(None, "--slo", metavar="SLOS",
                                      help="e.g. ttft_p99=2s,itl_p99=80ms: goodput is the share of requests "
                                           "meeting them."),
    sweep: Optional[str] = typer.Option(None, "--sweep", metavar="STEPS",
                                        help="rate:1,2,4,8 or concurrency:4,8,16: the highest step meeting --slo."),
    dataset: Optional[str] = typer.Option(None, "--dataset", metavar="FILE",
                                          help="JSONL (or JSON list) of prompts, lengths or ShareGPT conversations "
                                               "to replay."),
) -> int:
    """Hold a fixed streamed load for N rounds; tell memory growth from preemption, local from shared."""
    from gpustack_guard.commands.soak import SoakOptions, run

    return run(SoakOptions(
        url=url, model=model, rounds=rounds, round_seconds=round_seconds, concurrency=concurrency,
        workload_file=workload, prompt_tokens=prompt_tokens, max_tokens=max_tokens, metrics_urls=list(metrics_url),
        pid=pid, memory_limit=memory_limit, reference_url=reference_url, reference_model=reference_model,
        reference_metrics_urls=list(reference_metrics_url), out_dir=out_dir, output=output, fail_on=fail_on,
        api_key_file=api_key_file, reference_api_key_file=reference_api_key_file, seed=seed,
        round_requests=round_requests, request_timeout=request_timeout,
        ca_bundle=ca_bundle, insecure=insecure, observed_file=observed, rate=rate, arrival=arrival,
        warmup_rounds=warmup_rounds, slo=slo, sweep=sweep, dataset_file=dataset))


@app.command()
def rule(
    rule_id: Optional[str] = typer.Argument(None, metavar="RULE", show_default=False,
                                            help="A rule id (GSG033) or name (kv-oversubscribed)."),
    list_rules: bool = typer.Option(False, "--list", help="List every rule: id, name, default severity, summary."),
) -> int:
    """Explain a rule: what it catches, why it matters, an example and the fix."""
    from gpustack_guard.commands.rule import RuleOptions, run

    return run(RuleOptions(rule_id, list_rules))


@app.command()
def advise(
    model: str = typer.Option(..., "--model", "-m", metavar="MODEL",
                              help="Hugging Face repo id or catalog name; llama.cpp: REPO:FILE.gguf."),
    workload: List[str] = typer.Option(..., "--workload", "-w", metavar="FILE",
                                       help="A workload file (workloads/*.yaml); repeat for several."),
    fleet: Optional[str] = typer.Option(None, "--fleet", envvar="GSG_FLEET", metavar="FILE",
                                        help="Fleet snapshot; then --gpus takes GPU ids (worker:cuda:0,...)."),
    gpus: str = typer.Option(..., "--gpus", metavar="IDS|N", help="GPU ids with --fleet, a count with --gpu-memory."),
    gpu_memory: Optional[str] = typer.Option(None, "--gpu-memory", metavar="SIZE",
                                             help="One GPU's memory (48GiB) when there is no fleet file."),
    backend: str = typer.Option("vLLM", "--backend", metavar="BACKEND", help="vLLM, SGLang or llama.cpp."),
    backend_version: Optional[str] = typer.Option(None, "--backend-version", metavar="VERSION"),
    output: AdviceFormat = typer.Option(AdviceFormat.TEXT.value, "--output", "-o", metavar="FORMAT",
                                        case_sensitive=False, help="text, json, markdown or html."),
    emit_specs: Optional[str] = typer.Option(None, "--emit-specs", metavar="DIR",
                                             help="Write the advised specs there (gsg validate passes them)."),
    name: Optional[str] = typer.Option(None, "--name", metavar="NAME", help="Base deployment name."),
    offline: bool = OFFLINE,
    observed: Optional[str] = typer.Option(None, "--observed", metavar="FILE",
                                           help="`gsg verify -o json` output or a recorded vector: scale the pools of "
                                                "that configuration by the engine's observed / gsg's estimated KV."),
    force: bool = typer.Option(False, "--force", help="With --emit-specs: replace existing spec files that differ."),
) -> int:
    """Advise flags for workloads: one pool or two, with numbers; every candidate judged like gsg validate."""
    from gpustack_guard.commands.advise import AdviseOptions, run

    return run(AdviseOptions(model, tuple(workload), fleet, gpus, gpu_memory, backend, backend_version, output,
                             emit_specs, name, offline, observed, force))


@functools.cache
def _click_command(only: str | None = None):
    """The click command typer builds from `app`: built once per process, not on every call. Building it reads
    every command's signature and type hints (~12 ms for all of them); the test suite runs the CLI in-process
    thousands of times. `only`: a group holding just that top-level command (and the root options), for a run
    that names it first: its parsing, help and errors are the same, the others are not built (scale benchmark:
    ~11 ms of a validate run)."""
    if only is None:
        return typer.main.get_command(app)
    pruned = copy.copy(app)
    pruned.registered_commands = [c for c in app.registered_commands if _command_name(c) == only]
    pruned.registered_groups = []
    return typer.main.get_command(pruned)


def _command_name(info) -> str:
    return info.name or typer.main.get_command_name(info.callback.__name__)


def _first_command(argv: list[str] | None) -> str | None:
    """The top-level command when it is the first argument (plain commands only, not groups), and no shell
    completion is asked for (that lists every command); else None: the whole app is built."""
    args = sys.argv[1:] if argv is None else argv
    while args and args[0] in GLOBAL_FLAGS:
        args = args[1:]
    if not args or any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ):
        return None
    names = {_command_name(c) for c in app.registered_commands}
    return args[0] if args[0] in names else None


GLOBAL_FLAGS = ("-q", "--quiet")  # the root's own options, accepted after the subcommand too


def _global_flags_first(argv: list[str], own: frozenset[str] = frozenset()) -> list[str]:
    """`gsg validate -q specs/` as `gsg -q validate specs/` (click reads root options only before the command);
    nothing after `--` moves (backend arguments), nor a flag the command has itself (`estimate -q` is
    --quantization)."""
    cut = argv.index("--") if "--" in argv else len(argv)
    movable = [f for f in GLOBAL_FLAGS if f not in own]
    moved = [a for a in argv[:cut] if a in movable]
    return moved + [a for a in argv[:cut] if a not in movable] + argv[cut:]


def _own_options(argv: list[str]) -> frozenset[str]:
    """The option names of the command argv names first (after root flags), or none."""
    name = _first_command(argv)
    if name is None:
        return frozenset()
    command = _click_command(name).commands[name]
    return frozenset(opt for param in command.params for opt in param.opts)


_ARGS_AFTER_DASHES: list[str] = []  # what followed `--` on this run's command line (verify --log's arguments)


def _run_app(argv: list[str] | None):
    """What `app(...)` does, over the command built once: typer's exception hook, then click."""
    if sys.excepthook is not typer.main.except_hook:
        sys.excepthook = typer.main.except_hook
    argv = sys.argv[1:] if argv is None else list(argv)
    _ARGS_AFTER_DASHES[:] = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = _global_flags_first(argv, _own_options(argv))
    return _click_command(_first_command(argv))(args=argv, prog_name="gsg", standalone_mode=False)


def main(argv: list[str] | None = None) -> int:
    """One run of the typer command line, inside process.run_guarded (collector, streams, signals, one line for
    any error); what only typer and click raise is handled here."""
    from gpustack_guard.console.process import run_guarded

    return run_guarded(lambda: _run_typer(argv))


def _run_typer(argv: list[str] | None):
    from gpustack_guard.adapters.files.output import err
    from gpustack_guard.core.echo import escape

    try:
        return _run_app(argv)
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        err("gsg: aborted")
        return EXIT_INTERRUPTED
    except getattr(click_exceptions, "NoArgsIsHelpError", ()) as exc:  # bare `gsg`: help, not an error
        sys.stdout.write(exc.format_message() + "\n")
        return EXIT_OK
    except click_exceptions.UsageError as exc:
        hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx else ""
        err(f"gsg: usage error: {escape(exc.format_message())}{hint}")
        return EXIT_FAIL
    except click_exceptions.ClickException as exc:
        err(f"gsg: error: {escape(exc.format_message())}")
        return EXIT_FAIL


def entry() -> None:
    """What the `gsg` console script and `python -m gpustack_guard` run, through `__main__.entry` (which tunes
    the collector before anything is imported, and takes the typer-free path for a plain validate run)."""
    from gpustack_guard.console.process import leave
    from gpustack_guard.wiring import leave_without_teardown

    leave_without_teardown()
    leave(main())
