"""The `gsg` command line: thin adapters from typer options to command functions returning exit codes.

Exit codes: 0 clean, 1 findings at/above the fail level or a user error, 2 changes present (plan/drift with
--detailed-exitcode only), 3 internal error, 130 interrupted. Usage errors exit 1, never 2.
"""

from __future__ import annotations

import sys
from typing import List, Optional

import typer

try:  # typer >= 0.24 vendors click; older releases depend on it
    from typer._click import exceptions as click_exceptions
except ImportError:  # pragma: no cover - depends on the installed typer
    from click import exceptions as click_exceptions

from gpustack_guard import __version__
from gpustack_guard.core.errors import EXIT_FAIL, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, GsgError

app = typer.Typer(
    name="gsg",
    help="gpustack-guard: GPUStack deployments as code, checked by memory arithmetic before they OOM.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

SPECS = typer.Argument(..., help="Spec files or folders (*.yaml, *.yml).", show_default=False, metavar="SPECS...")
OUTPUT = typer.Option(None, "--output", "-o", envvar="GSG_OUTPUT", metavar="FORMAT",
                      help="text | json | github | sarif | junit | markdown | auto (github under GitHub Actions).")
OFFLINE = typer.Option(False, "--offline", envvar="GSG_OFFLINE",
                       help="Never ask the Hugging Face hub for model facts (catalog and local files only).")
TEMPLATES = typer.Option([], "--templates", metavar="DIR",
                         help="Extra template folder, searched before templates/ (repeatable).")


SERVER = typer.Option(None, "--server", envvar="GSG_URL", metavar="URL", help="GPUStack server URL (GSG_URL).")
API_KEY_FILE = typer.Option(None, "--api-key-file", metavar="FILE",
                            help="File holding the API key; else GSG_API_KEY. Never a bare flag value.")
CA_BUNDLE = typer.Option(None, "--ca-bundle", metavar="FILE", help="CA bundle for the server's TLS certificate.")
INSECURE = typer.Option(False, "--insecure", help="Do not verify the server's TLS certificate.")
CLUSTER = typer.Option(None, "--cluster", envvar="GSG_CLUSTER", metavar="NAME", help="Only this cluster.")


def _connect(server, api_key_file, ca_bundle, insecure):
    from gpustack_guard.commands.connect import connect

    if not server:
        raise GsgError("no server: pass --server URL or set GSG_URL")
    return connect(server, api_key_file, ca_bundle, insecure)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"gsg {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """gpustack-guard (gsg)."""


@app.command()
def validate(
    specs: List[str] = SPECS,
    fleet: Optional[str] = typer.Option(None, "--fleet", "-f", envvar="GSG_FLEET",
                                        help="Fleet snapshot file (YAML/JSON) to validate against offline."),
    output: Optional[str] = OUTPUT,
    fail_level: str = typer.Option("error", "--fail-level", help="Exit 1 on findings at or above: error | warning."),
    offline: bool = OFFLINE,
    templates: List[str] = TEMPLATES,
    server: Optional[str] = SERVER,
    api_key_file: Optional[str] = API_KEY_FILE,
    server_check: bool = typer.Option(False, "--server-check",
                                      help="Also ask GPUStack's /v2/model-evaluations and compare its verdict."),
    ca_bundle: Optional[str] = CA_BUNDLE,
    insecure: bool = INSECURE,
) -> int:
    """Check specs: schema and spelling, templates, placement and GPUStack admission, memory arithmetic."""
    from gpustack_guard.commands.validate import ValidateOptions, run

    connection = _connect(server, api_key_file, ca_bundle, insecure) if server and (not fleet or server_check) \
        else None
    return run(ValidateOptions(specs, fleet, output, fail_level, offline, templates, server_check), connection)


@app.command()
def render(
    specs: List[str] = SPECS,
    output: str = typer.Option("yaml", "--output", "-o", help="yaml | json"),
    show_secrets: bool = typer.Option(False, "--show-secrets", help="Print secret env values instead of ********."),
    out_file: Optional[str] = typer.Option(None, "--out", metavar="FILE", help="Write to FILE instead of stdout."),
    check: bool = typer.Option(False, "--check", help="With --out: exit 1 when FILE is stale instead of writing."),
    offline: bool = OFFLINE,
    templates: List[str] = TEMPLATES,
) -> int:
    """Print the final deployment documents exactly as gsg would send them to GPUStack."""
    from gpustack_guard.commands.render import run

    return run(specs, output, show_secrets, offline, templates, out_file, check)


@app.command()
def schema() -> int:
    """Print the JSON Schema (draft-07) of a spec document, for editors' YAML language servers."""
    from gpustack_guard.adapters.files.output import out
    from gpustack_guard.core.spec.schema import schema_text

    out(schema_text())
    return EXIT_OK


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def estimate(
    ctx: typer.Context,
    model: str = typer.Option(..., "--model", "-m", help="Catalog name, Hugging Face repo id, config.json or "
                                                         "GGUF path."),
    gpu_memory: str = typer.Option(..., "--gpu-memory", help="Memory of one GPU: bytes or units (23.58GiB, 24GB)."),
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
    output: str = typer.Option("text", "--output", "-o", help="text | json"),
    offline: bool = OFFLINE,
) -> int:
    """Per-GPU memory breakdown for one model. Backend arguments follow `--`, as in backend_parameters."""
    from gpustack_guard.commands.estimate import run

    return run(model, gpu_memory, gpus, backend, backend_version, output, list(ctx.args), offline, gpu_name,
               quantization, platform_footprint)


@app.command()
def snapshot(
    out: str = typer.Option(..., "--out", metavar="FILE", help="Where to write the snapshot (YAML)."),
    cluster: Optional[str] = CLUSTER,
    server: Optional[str] = SERVER,
    api_key_file: Optional[str] = API_KEY_FILE,
    ca_bundle: Optional[str] = CA_BUNDLE,
    insecure: bool = INSECURE,
) -> int:
    """Write the live fleet (clusters, workers, GPUs, instances) as a snapshot file for offline validation."""
    from gpustack_guard.commands.snapshot import run

    return run(_connect(server, api_key_file, ca_bundle, insecure), out, cluster)


@app.command(name="export")
def export_(
    out: str = typer.Option(..., "--out", metavar="DIR", help="Folder to write one spec file per model into."),
    cluster: Optional[str] = CLUSTER,
    show_secrets: bool = typer.Option(False, "--show-secrets", help="Write secret env values instead of ${NAME}."),
    force: bool = typer.Option(False, "--force", help="Replace existing spec files that differ."),
    server: Optional[str] = SERVER,
    api_key_file: Optional[str] = API_KEY_FILE,
    ca_bundle: Optional[str] = CA_BUNDLE,
    insecure: bool = INSECURE,
) -> int:
    """Adopt live deployments: write them as spec files (server-filled fields stripped, secrets as references)."""
    from gpustack_guard.commands.export import run

    return run(_connect(server, api_key_file, ca_bundle, insecure), out, cluster, show_secrets, force)


PRUNE = typer.Option(False, "--prune", help="Delete this project's models that no spec declares (needs a project "
                                            "identity and the project's root folder).")
ADOPT = typer.Option(False, "--adopt", help="Take over live models of the same name that gsg does not own yet.")
PROJECT = typer.Option(None, "--project", envvar="GSG_PROJECT", metavar="NAME",
                       help="The project these specs belong to (else gsg.yaml `project:` at the spec root).")
CLAIM_LEGACY = typer.Option(False, "--claim-legacy",
                            help="Record this project in the legacy (path-only) markers of models the specs declare.")
TAKE_OVER = typer.Option(None, "--take-over-from", metavar="PROJECT",
                         help="Move models of a declared name from this other project to this one (repeatable).")
TARGET = typer.Option(None, "--target", metavar="NAME", help="Only these deployments (repeatable).")
ALLOW_EMPTY = typer.Option(False, "--allow-empty", help="Allow an empty spec set (with --prune: delete all).")


@app.command()
def plan(
    specs: List[str] = SPECS,
    output: Optional[str] = typer.Option(None, "--output", "-o", envvar="GSG_PLAN_OUTPUT", metavar="FORMAT",
                                         help="text | json | markdown (a pull-request comment)."),
    out_file: Optional[str] = typer.Option(None, "--out", metavar="FILE",
                                           help="Save the plan (JSON) for `gsg apply FILE`."),
    detailed_exitcode: bool = typer.Option(False, "--detailed-exitcode",
                                           help="Exit 0 no changes, 1 error, 2 changes present."),
    prune: bool = PRUNE,
    adopt: bool = ADOPT,
    project: Optional[str] = PROJECT,
    claim_legacy: bool = CLAIM_LEGACY,
    take_over_from: Optional[List[str]] = TAKE_OVER,
    target: Optional[List[str]] = TARGET,
    allow_empty: bool = ALLOW_EMPTY,
    offline: bool = OFFLINE,
    templates: List[str] = TEMPLATES,
    server: Optional[str] = SERVER,
    api_key_file: Optional[str] = API_KEY_FILE,
    ca_bundle: Optional[str] = CA_BUNDLE,
    insecure: bool = INSECURE,
) -> int:
    """Show what apply would change: + create, ~ update, -/+ replace, - delete, ! conflict (validation first)."""
    from gpustack_guard.commands.plan import run

    return run(_connect(server, api_key_file, ca_bundle, insecure), specs, output=output, out_file=out_file,
               prune=prune, adopt=adopt, targets=target, detailed_exitcode=detailed_exitcode,
               allow_empty=allow_empty, offline=offline, templates=templates, project=project,
               claim_legacy=claim_legacy, take_over_from=take_over_from)


@app.command()
def apply(
    specs: List[str] = typer.Argument(..., help="Spec files or folders, or one saved plan file (*.json).",
                                      show_default=False, metavar="SPECS_OR_PLAN..."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation (needed off a terminal)."),
    prune: bool = PRUNE,
    adopt: bool = ADOPT,
    project: Optional[str] = PROJECT,
    claim_legacy: bool = CLAIM_LEGACY,
    take_over_from: Optional[List[str]] = TAKE_OVER,
    target: Optional[List[str]] = TARGET,
    allow_empty: bool = ALLOW_EMPTY,
    no_restart: bool = typer.Option(False, "--no-restart", help="Do not restart instances after an update."),
    wait: bool = typer.Option(False, "--wait", help="Wait until every changed deployment is ready; stop early "
                                                    "on an instance in error or restarting."),
    wait_timeout: float = typer.Option(900.0, "--wait-timeout", metavar="SECONDS", help="Give up waiting after."),
    concurrency: int = typer.Option(8, "--concurrency", min=1, max=256, help="Independent changes at once."),
    offline: bool = OFFLINE,
    templates: List[str] = TEMPLATES,
    server: Optional[str] = SERVER,
    api_key_file: Optional[str] = API_KEY_FILE,
    ca_bundle: Optional[str] = CA_BUNDLE,
    insecure: bool = INSECURE,
) -> int:
    """Carry out the plan: deletes and scale-downs first, then updates (with restart), then creates."""
    from gpustack_guard.commands.apply import run

    return run(_connect(server, api_key_file, ca_bundle, insecure), specs, assume_yes=yes, prune=prune,
               adopt=adopt, targets=target, allow_empty=allow_empty, restart=not no_restart, wait=wait,
               wait_timeout=wait_timeout, concurrency=concurrency, offline=offline, templates=templates,
               project=project, claim_legacy=claim_legacy, take_over_from=take_over_from)


@app.command()
def drift(
    specs: List[str] = SPECS,
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FORMAT", help="text | json | markdown"),
    detailed_exitcode: bool = typer.Option(False, "--detailed-exitcode", help="Exit 2 when drift is found."),
    project: Optional[str] = PROJECT,
    offline: bool = OFFLINE,
    templates: List[str] = TEMPLATES,
    server: Optional[str] = SERVER,
    api_key_file: Optional[str] = API_KEY_FILE,
    ca_bundle: Optional[str] = CA_BUNDLE,
    insecure: bool = INSECURE,
) -> int:
    """Read-only: live fields that differ from the specs, missing and orphaned models, unhealthy instances."""
    from gpustack_guard.commands.drift import run

    return run(_connect(server, api_key_file, ca_bundle, insecure), specs, output=output,
               detailed_exitcode=detailed_exitcode, offline=offline, templates=templates, project=project)


@app.command()
def soak(
    url: str = typer.Option(..., "--url", metavar="URL",
                            help="OpenAI-compatible endpoint: GPUStack's gateway, or vLLM/SGLang/llama.cpp directly."),
    model: str = typer.Option(..., "--model", metavar="NAME", help="Model name the endpoint serves."),
    rounds: int = typer.Option(6, "--rounds", metavar="N", help="Rounds of fixed load."),
    round_seconds: float = typer.Option(60.0, "--round-seconds", metavar="S", help="Length of a round."),
    concurrency: int = typer.Option(8, "--concurrency", metavar="C", help="Streams kept in flight."),
    workload: Optional[str] = typer.Option(None, "--workload", metavar="FILE",
                                           help="YAML list of {prompt_tokens, max_tokens, weight} to cycle."),
    prompt_tokens: int = typer.Option(512, "--prompt-tokens", metavar="N", help="Prompt length without --workload."),
    max_tokens: int = typer.Option(128, "--max-tokens", metavar="N", help="Output length without --workload."),
    metrics_url: List[str] = typer.Option([], "--metrics-url", metavar="URL",
                                          help="Prometheus /metrics to sample every second (repeatable)."),
    pid: Optional[int] = typer.Option(None, "--pid", metavar="PID", help="Also sample this local process's RSS."),
    memory_limit: Optional[str] = typer.Option(None, "--memory-limit", metavar="SIZE",
                                               help="What the memory signal runs out at (e.g. 64GiB), for the "
                                                    "recycle projection."),
    reference_url: Optional[str] = typer.Option(None, "--reference-url", metavar="URL",
                                                help="A second endpoint serving the same model: the control."),
    reference_model: Optional[str] = typer.Option(None, "--reference-model", metavar="NAME",
                                                  help="Its model name (default: --model)."),
    reference_metrics_url: List[str] = typer.Option([], "--reference-metrics-url", metavar="URL",
                                                    help="The reference's /metrics, charted beside ours."),
    out_dir: Optional[str] = typer.Option(None, "--out", metavar="DIR", help="Write soak.json and report.html."),
    output: str = typer.Option("text", "--output", "-o", metavar="FORMAT", help="text | json"),
    fail_on: str = typer.Option("failing", "--fail-on", metavar="LEVEL",
                                help="Exit 1 on: failing | degraded (any verdict but stable) | never."),
    seed: int = typer.Option(0, "--seed", metavar="N", help="Seed of the generated prompts."),
    round_requests: Optional[int] = typer.Option(None, "--round-requests", metavar="N",
                                                 help="At most N requests per round."),
    request_timeout: float = typer.Option(120.0, "--request-timeout", metavar="SECONDS", help="Per request."),
    api_key_file: Optional[str] = API_KEY_FILE,
    ca_bundle: Optional[str] = CA_BUNDLE,
    insecure: bool = INSECURE,
) -> int:
    """Hold a fixed streamed load for N rounds; tell memory growth from preemption, local from shared."""
    from gpustack_guard.commands.soak import SoakOptions, run

    return run(SoakOptions(
        url=url, model=model, rounds=rounds, round_seconds=round_seconds, concurrency=concurrency,
        workload_file=workload, prompt_tokens=prompt_tokens, max_tokens=max_tokens, metrics_urls=list(metrics_url),
        pid=pid, memory_limit=memory_limit, reference_url=reference_url, reference_model=reference_model,
        reference_metrics_urls=list(reference_metrics_url), out_dir=out_dir, output=output, fail_on=fail_on,
        api_key_file=api_key_file, seed=seed, round_requests=round_requests, request_timeout=request_timeout,
        ca_bundle=ca_bundle, insecure=insecure))


def main(argv: list[str] | None = None) -> int:
    import gc

    # A short-lived process that builds many small acyclic objects (YAML nodes, findings): the cyclic
    # collector's passes were a quarter of `validate` on 1,000 specs. Long waits collect explicitly.
    gc.disable()

    from gpustack_guard.adapters.files.output import err

    try:
        result = app(args=argv, prog_name="gsg", standalone_mode=False)
        return result if isinstance(result, int) else EXIT_OK
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
        err(f"gsg: usage error: {exc.format_message()}{hint}")
        return EXIT_FAIL
    except click_exceptions.ClickException as exc:
        err(f"gsg: error: {exc.format_message()}")
        return EXIT_FAIL
    except GsgError as exc:
        err(f"gsg: error: {exc}")
        return EXIT_FAIL
    except KeyboardInterrupt:
        err("gsg: interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # a bug: one line, no traceback unless asked for
        import os
        import traceback

        if os.environ.get("GSG_DEBUG"):
            traceback.print_exc()
        err(f"gsg: internal error: {type(exc).__name__}: {exc} (set GSG_DEBUG=1 for a traceback; please report)")
        return EXIT_INTERNAL


def entry() -> None:
    """The `gsg` console script and `python -m gpustack_guard`: run, flush, and exit without tearing down.

    Everything gsg writes is closed by the time main() returns (files by their with-blocks, thread pools
    joined), so the interpreter's object-by-object teardown of the heap only costs time: ~50 ms after
    validating 1,000 specs. Tests call main() and keep the normal exit.
    """
    import os

    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, OSError):  # the reader went away: nothing left to say
        pass
    os._exit(code)
