"""The composition root: the one place that builds adapters and hands them to the core and the commands.

Commands ask wiring for what they need (a connection, a template renderer, a facts resolver, the desired state
of a spec tree) and never import each other. Environment switches are read here, once.
Adapters are imported inside the builders: a command pays only for the edges it uses (benchmarks/startup.py).
"""

from __future__ import annotations

import contextlib
import gc
import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Mapping

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.errors import GsgError
from gpustack_guard.core.findings import Finding, Severity
from gpustack_guard.core.values import frozen_value

if TYPE_CHECKING:
    import httpx

    from gpustack_guard.adapters.files.suppressions import Acceptance
    from gpustack_guard.adapters.gpustack.client import GPUStackClient
    from gpustack_guard.adapters.model_sources.resolver import FactsResolver
    from gpustack_guard.adapters.templates import TemplateRenderer
    from gpustack_guard.core.deploy.plan import Change
    from gpustack_guard.core.deploy.removals import OverlayRemovals
    from gpustack_guard.core.fleet.model import Fleet
    from gpustack_guard.core.ownership import Claims, Identity
    from gpustack_guard.core.pipeline import Report
    from gpustack_guard.core.render import RenderedSpec

# Tests replace this with an in-memory GPUStack (an httpx.MockTransport factory); None means the real network.
transport_factory: Callable[[], httpx.BaseTransport] | None = None
# Tests replace this so retry backoff does not really sleep; None means time.sleep.
retry_sleep: Callable[[float], None] | None = None


# --- option groups shared by several commands ------------------------------------------------------------

@frozen_value  # identity equality: cheaper to define, never compared or hashed
class ConnectionOptions:
    """Where the GPUStack server is and how to trust it; the key comes from GSG_API_KEY or a file.

    With a context (--context / GSG_CONTEXT, or the contexts file's current-context when no server is given),
    the context fills what the command line left out; a --server on the command line still wins, GSG_URL
    from the environment does not (the context was asked for by name)."""

    __repr__ = fields_repr

    server: str | None = None
    api_key_file: str | None = None
    ca_bundle: str | None = None
    insecure: bool = False
    timeout: float = 15.0
    context: str | None = None
    server_from_command_line: bool = False
    api_key_env: str = "GSG_API_KEY"
    # filled from the chosen context: defaults of validate's --fleet, snapshot/export's --cluster, the overlay
    fleet: str | None = None
    cluster: str | None = None
    overlay: str | None = None


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class SpecSources:
    """A spec tree and what rendering it needs: extra template folders, hub access, the project identity."""

    __repr__ = fields_repr

    specs: tuple[str, ...] = ()
    templates: tuple[str, ...] = ()
    offline: bool = False
    project: str | None = None
    overlay: str | None = None  # specs/overlays/NAME patches the specs (adapters/files/overlays.py)
    select: tuple[str, ...] = ()  # --select: replaces gsg.yaml's `select`
    ignore: tuple[str, ...] = ()  # --ignore: adds to gsg.yaml's `ignore`


def spec_sources(specs, templates, offline, project=None, overlay=None, select=(), ignore=()) -> SpecSources:
    """SpecSources from a command's options: --select/--ignore given as `GSG033,GSG034 --ignore GSG040` become
    one tuple of entries (blanks dropped)."""
    return SpecSources(tuple(specs), tuple(templates), offline, project, overlay, comma_list(select or ()),
                       comma_list(ignore or ()))


def comma_list(values) -> tuple[str, ...]:
    """`--ignore GSG033,GSG034 --ignore GSG040` as one tuple of entries (blanks dropped)."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def with_overlay(sources: SpecSources, overlay: str | None) -> SpecSources:
    """The context's overlay, unless the command line chose one."""
    return sources if sources.overlay or not overlay else replace(sources, overlay=overlay)


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class Ownership:
    """What plan and apply may do to models beyond this project's own."""

    __repr__ = fields_repr

    prune: bool = False
    adopt: bool = False
    claim_legacy: bool = False
    take_over_from: tuple[str, ...] = ()


def hub_offline(flag: bool, environ: Mapping[str, str] = os.environ) -> bool:
    """--offline / GSG_OFFLINE (read by the CLI option) or the hub's own switches, HF_HUB_OFFLINE (and the
    legacy TRANSFORMERS_OFFLINE), read as huggingface_hub reads them (1, on, yes, true)."""
    from gpustack_guard.adapters.model_sources.hub_cache import is_true

    return flag or is_true(environ.get("HF_HUB_OFFLINE")) or is_true(environ.get("TRANSFORMERS_OFFLINE"))


# --- the process ------------------------------------------------------------------------------------------

# gen-0 every 100,000 allocations, not 700 (tune_collector says why); __main__.entry applies them first
COLLECTOR_THRESHOLDS = (100_000, 20, 100)


def tune_collector() -> None:
    """The gsg process's cyclic-collector settings (main() applies them; benchmarks that time an edge in-process
    apply them too, to measure what the command does). gsg builds many small acyclic objects (YAML nodes,
    findings, fleet records), and the default pass every 700 allocations was a quarter of validating 1,000 specs
    (benchmarks/scale.py 3.0 -> 2.4) and made reading 200,000 instances grow faster than linearly
    (benchmarks/large_fleet.py 1.6-1.9 -> 1.1). Collect rarely instead of never, so long waits (apply --wait,
    soak) need no care; what start-up built is frozen out of every pass."""
    gc.freeze()
    gc.set_threshold(*COLLECTOR_THRESHOLDS)


# What a command built that lives until the process ends, when entry() leaves without interpreter teardown.
_KEPT_UNTIL_EXIT: list[object] = []
_exit_without_teardown = False


def leave_without_teardown() -> None:
    """Called by the console entry only (never by main(), which tests call in-process): from here on,
    keep_until_exit holds what it is given, and entry() ends the process with os._exit."""
    global _exit_without_teardown
    _exit_without_teardown = True


def keep_until_exit(*objects: object) -> None:
    """Hand a command's large results (10,000 specs: ~a million objects) to the process's end instead of freeing
    them one by one when the command returns; os._exit in entry() drops them all at once. Speed, proven by
    benchmarks/scale.py (cli._leave gives the figures). A no-op in-process
    (tests, the benchmarks' in-process phases), where the memory must be returned."""
    if _exit_without_teardown:
        _KEPT_UNTIL_EXIT.extend(objects)


@contextlib.contextmanager
def long_lived() -> Iterator[None]:
    """Around building what a command keeps until it ends (the loaded specs and fleet): the cyclic collector
    would walk those objects over and over and find no garbage, so it pauses while they are built and they are
    frozen after (later passes skip them). Speed, proven by benchmarks/scale.py: one pass over the 100,000
    young objects of loading 1,000 specs cost 17-35 ms of ~370."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


# --- builders ---------------------------------------------------------------------------------------------

def build_renderer(spec_paths: tuple[str, ...] | list[str], extra: tuple[str, ...] | list[str]) -> TemplateRenderer:
    from gpustack_guard.adapters.templates import TemplateRenderer, default_cache_dir, default_search_path

    for directory in extra:
        if not Path(directory).is_dir():
            raise GsgError("template folder not found", where=directory)
    return TemplateRenderer([Path(d).resolve() for d in extra] + default_search_path(list(spec_paths)),
                            cache_dir=default_cache_dir() / "templates")


def files_a_run_reads(spec_paths: list[str], read: list[str], fleet: str | None, overlay: str | None,
                      renderer: TemplateRenderer) -> list[str]:
    """What a validate or render run read or may read, none of which its output may replace: the spec files it
    loaded (`read`), the fleet, the project file, every file of the chosen overlay's folders and of the template
    search path (a template, or an include of one)."""
    from gpustack_guard.adapters.files.overlays import OVERLAYS_FOLDER
    from gpustack_guard.adapters.files.project_file import project_file_of
    from gpustack_guard.adapters.files.spec_loader import display_path

    files = list(read) + ([fleet] if fleet else [])
    with contextlib.suppress(GsgError):  # specs of several projects: the run itself says so
        project = project_file_of(spec_paths)
        files += [display_path(project)] if project else []
    folders = [Path(p) / OVERLAYS_FOLDER / overlay for p in spec_paths if overlay and Path(p).is_dir()]
    with contextlib.suppress(OSError):
        files += [display_path(f) for folder in folders if folder.is_dir() for f in folder.rglob("*")]
        files += [display_path(f) for folder in renderer.search_path if folder.is_dir() for f in folder.iterdir()]
    return files


def build_resolver(offline: bool) -> FactsResolver:
    from gpustack_guard.adapters.files.output import register_secret
    from gpustack_guard.adapters.model_sources.hub_token import hub_token
    from gpustack_guard.adapters.model_sources.resolver import FactsResolver

    token = hub_token()
    if token and token.from_file:  # scrubbed from all output, as HF_TOKEN's value is by the env rule
        register_secret(token.value)
    return FactsResolver(offline=hub_offline(offline), hf_token=token.value if token else None)


def resolve_context(opts: ConnectionOptions) -> ConnectionOptions:
    """The connection options with the chosen context's values filled in (see ConnectionOptions)."""
    from gpustack_guard.adapters.files.contexts import config_path, load_contexts

    path = config_path()
    name = opts.context
    if name is None and (opts.server or not path.is_file()):
        return opts
    contexts = load_contexts(path)
    if name is None and contexts.current is None:
        return opts
    ctx = contexts.get(name)
    server = opts.server if opts.server_from_command_line and opts.server else ctx.server
    return replace(opts, server=server, context=ctx.name, api_key_file=opts.api_key_file or ctx.api_key_file,
                   api_key_env=ctx.api_key_env or opts.api_key_env, ca_bundle=opts.ca_bundle or ctx.ca_bundle,
                   insecure=opts.insecure or ctx.insecure, timeout=ctx.timeout or opts.timeout, fleet=ctx.fleet,
                   cluster=ctx.cluster, overlay=ctx.overlay)


def context_defaults(opts: ConnectionOptions) -> tuple[str | None, str | None, str | None]:
    """(fleet, cluster, overlay) the chosen context names, for commands whose own flags left them out."""
    resolved = resolve_context(opts)
    return resolved.fleet, resolved.cluster, resolved.overlay


def read_api_key(api_key_file: str | None, api_key_env: str = "GSG_API_KEY") -> str | None:
    """The key from a file, else the environment (never a bare flag value); registered to be masked everywhere."""
    from gpustack_guard.adapters.files.output import register_secret

    if api_key_file:
        from gpustack_guard.adapters.files.regular_file import MAX_KEY_FILE_BYTES, read_text_file

        try:  # a FIFO or /dev/zero given as the key file is refused, never waited on or read forever
            key: str | None = read_text_file(api_key_file, MAX_KEY_FILE_BYTES).strip()
        except ValueError as exc:
            raise GsgError(str(exc), where=api_key_file) from None
        if not key:
            raise GsgError("the API key file is empty", where=api_key_file)
        _warn_if_shared(api_key_file)
    else:
        key = os.environ.get(api_key_env, "").strip() or None
    register_secret(key)
    unsendable = _unsendable_at(key)
    if unsendable is not None:
        # the character itself is part of the secret: its position alone is said
        raise GsgError(f"the API key has a space, a control or a non-ASCII character (character {unsendable}): no "
                       "HTTP header carries it as a bearer token (a key file of two lines?)",
                       where=api_key_file or api_key_env)
    return key


def _unsendable_at(key: str | None) -> int | None:
    """The 1-based position of the first character a bearer token cannot hold (RFC 6750's b64token is printable
    ASCII without a space): non-ASCII ended a soak as 'internal error: UnicodeEncodeError' (httpx encodes headers as
    ASCII), a line break inside made every request fail as LocalProtocolError."""
    for at, char in enumerate(key or "", 1):
        if not "!" <= char <= "~":
            return at
    return None


def _warn_if_shared(api_key_file: str) -> None:
    """As ssh says of a private key others can read: a key file with group or world permissions is a key every
    account on the machine holds. A warning, not a refusal (a CI secret mount may be 0644 in a one-user
    container); said even with --quiet, since it is about the key, not progress."""
    from gpustack_guard.adapters.files.output import err

    if os.name != "posix":
        return
    try:
        mode = os.stat(api_key_file).st_mode & 0o777
    except OSError:  # it was just read; a race that removed it leaves nothing to warn about
        return
    if mode & 0o077:
        err(f"gsg: warning: {api_key_file}: the API key file can be read by other users (mode {mode:04o}); "
            "chmod 600 it")


@dataclass(eq=False, repr=False)  # identity equality: cheaper to define, never compared or hashed
class Connection:
    """A connected GPUStack client, with the fleet and model list it fetched last."""

    __repr__ = fields_repr

    client: GPUStackClient
    version: str
    last_fleet: Fleet | None = None  # the fleet fetched last (drift reads its instances without another call)
    last_models: list[dict] | None = None  # the model list fetched with it (plan reuses it)
    options: ConnectionOptions = field(default_factory=ConnectionOptions)  # as resolved (context filled in)

    def fleet(self) -> Fleet:
        from gpustack_guard.adapters.gpustack.live_fleet import fetch_fleet

        self.last_fleet, self.last_models = fetch_fleet(self.client, self.version)
        return self.last_fleet

    @property
    def supports_export(self) -> bool:
        from gpustack_guard.core.versions import at_least, gpustack_dev_build

        return gpustack_dev_build(self.version) or at_least(self.version, "2.3.0")


def connect(opts: ConnectionOptions) -> Connection:
    """A checked connection: a GPUStack 2.x server, a key, and that key accepted (/v2/users/me)."""
    from gpustack_guard.adapters.files.output import register_secret
    from gpustack_guard.adapters.gpustack.client import ApiError, GPUStackClient, Limits
    from gpustack_guard.adapters.gpustack.transport import printable
    from gpustack_guard.core.secrets import mask_url, url_secrets
    from gpustack_guard.core.urls import bad_url
    from gpustack_guard.core.versions import at_least, gpustack_dev_build

    opts = resolve_context(opts)
    if not opts.server:
        raise GsgError("no server: pass --server URL, set GSG_URL, or choose a context (--context NAME)")
    problem = bad_url(opts.server)
    if problem is not None:  # a context's or a caller's URL (the CLI refuses a bad --server or GSG_URL itself)
        raise GsgError(f"server URL {problem}", where=f"context '{opts.context}'" if opts.context else None)
    for secret in url_secrets(opts.server):  # a password or token of the URL is masked wherever it would show
        register_secret(secret)
    shown = mask_url(opts.server)
    key = read_api_key(opts.api_key_file, opts.api_key_env)
    if opts.ca_bundle and not Path(opts.ca_bundle).is_file():
        raise GsgError("CA bundle not found", where=opts.ca_bundle)
    verify: bool | str = False if opts.insecure else (opts.ca_bundle or True)
    transport = transport_factory() if transport_factory else None
    client = GPUStackClient(opts.server, key, timeout=opts.timeout, verify=verify, transport=transport,
                            sleep=retry_sleep or time.sleep, limits=Limits.from_env())
    version = str(client.version().get("version", ""))
    if not gpustack_dev_build(version) and not at_least(version, "2.0.0"):
        raise GsgError(f"GPUStack {version or '(unknown version)'} is not supported: gsg speaks the /v2 API of "
                       "GPUStack 2.x", where=shown)
    if not key:
        source = opts.api_key_env if opts.api_key_env != "GSG_API_KEY" else "GSG_API_KEY or pass --api-key-file"
        raise GsgError(f"no API key: set {source} (a key with the management scope)")
    try:
        client.me()
    except ApiError as exc:
        if exc.status != 404:
            raise
        # the first /v2 call: a 404 here is an API gsg does not speak (a later GPUStack) or a URL that is not
        # the server's root (a path prefix a proxy does not forward), never a missing user
        raise GsgError(f"GPUStack {printable(version, 64)} answers HTTP 404 on /v2/users/me: it does not serve the "
                       "/v2 API gsg speaks (GPUStack 2.x), or the URL is not the server's root", where=shown) from None
    return Connection(client, version, options=opts)


# --- the desired state of a spec tree against a live server (plan, apply, drift) ---------------------------

def _no_removals() -> OverlayRemovals:
    from gpustack_guard.core.deploy.removals import NO_REMOVALS

    return NO_REMOVALS


@dataclass(eq=False, repr=False)  # identity equality: cheaper to define, never compared or hashed
class DesiredState:
    """What the spec tree wants on a live server: the report, the rendered specs, the live models."""

    __repr__ = fields_repr

    report: Report
    rendered: list[RenderedSpec]
    live_models: list[dict]
    cluster_names: dict[int, str]
    cluster_ids: dict[str, int]
    specs: list[str]
    identity: Identity | None = None  # None without a project
    recorded: dict[str, str] = field(default_factory=dict)  # displayed spec path -> path its marker records
    removals: OverlayRemovals = field(default_factory=lambda: _no_removals())  # the overlay's exclude/delete
    acceptance: Acceptance | None = None  # gsg.yaml's rules with --select/--ignore (None: no spec paths)

    @property
    def whole_project(self) -> bool:
        from gpustack_guard.adapters.files.project_file import covers_project

        return self.identity is not None and covers_project(self.identity, self.specs)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.report.findings if f.severity == Severity.ERROR]


def load_desired(connection: Connection, sources: SpecSources, *, allow_empty: bool = False) -> DesiredState:
    from gpustack_guard.adapters.files.output import register_secret
    from gpustack_guard.adapters.files.project_file import find_identity, recorded_path
    from gpustack_guard.adapters.files.spec_loader import load_context_specs
    from gpustack_guard.adapters.files.suppressions import acceptance
    from gpustack_guard.core.pipeline import validate
    from gpustack_guard.core.secrets import REFERENCE

    sources = with_overlay(sources, connection.options.overlay)
    specs = list(sources.specs)
    identity = find_identity(specs, sources.project) if specs else None
    # an unknown rule id stops here, before the server is asked for anything
    accepted = acceptance(specs, sources.select, sources.ignore) if specs else None
    comments: dict = {}
    docs, problems, removals = load_context_specs(specs, allow_empty=allow_empty, overlay=sources.overlay,
                                                  comments=comments)
    fleet = connection.fleet()
    report = validate(docs, problems, build_renderer(specs, sources.templates),
                      build_resolver(sources.offline).resolve, fleet, os.environ)
    if accepted is not None:  # what validate accepts does not block plan or apply
        report = accepted.accept(report, (d.file for d in docs), comments)
    live = connection.last_models  # fetched with the fleet above, gsg's leases already left out
    assert live is not None
    names = {c.id: c.name for c in fleet.clusters if c.id is not None}
    _one_cluster_a_name(names)
    rendered = [ev.rendered for ev in report.evaluations]
    for secret in report.secret_values:  # sent to the server from here on: masked in whatever it echoes back
        if not REFERENCE.match(secret):  # a `${NAME}` left unresolved is no value, and errors name it
            register_secret(secret)
    recorded = {r.doc.file: recorded_path(identity, r.doc.file) for r in rendered}
    return DesiredState(report, rendered, live, names, {name: cid for cid, name in names.items()}, specs,
                        identity, recorded, removals, accepted)


def _one_cluster_a_name(names: Mapping[int, str]) -> None:
    """Specs and plans name clusters, writes send ids: two clusters of one name (another organisation's, in a
    platform admin's view) would make name -> id a guess, and with one spec cluster gsg would take the two for one."""
    from gpustack_guard.adapters.gpustack.client import ApiError
    from gpustack_guard.core import echo

    ids: dict[str, list[int]] = {}
    for cid, name in sorted(names.items()):
        ids.setdefault(name, []).append(cid)
    for name, same in ids.items():
        if len(same) > 1:
            raise ApiError("GET", "/v2/clusters", f"{len(same)} clusters are named '{echo.value(name)}' (ids "
                                                  f"{', '.join(map(str, same[:10]))}): gsg cannot tell which one a "
                                                  "spec or a live model's cluster name means, and writes nothing")


def blocked(state: DesiredState, verb: str, *, prune: bool, allow_empty: bool) -> bool:
    """Whether plan/apply must stop before planning: validation errors (printed here) block it; prune needs a
    project identity and the whole project read; an empty spec set never prunes every model of the project unless
    --allow-empty says so."""
    from gpustack_guard.adapters.files.output import err
    from gpustack_guard.adapters.files.project_file import PRUNE_NEEDS_PROJECT
    from gpustack_guard.adapters.files.spec_loader import display_path
    from gpustack_guard.reporters import text

    if prune and state.identity is None:
        raise GsgError(PRUNE_NEEDS_PROJECT)
    if prune and state.identity is not None and not state.whole_project:
        raise GsgError(f"--prune needs the whole project '{state.identity.name}': pass its root folder "
                       f"{display_path(state.identity.root)} (where it is declared: {state.identity.declared_in}), "
                       "not a part of it")
    if state.errors:
        secrets = state.report.secret_values
        err(text.render(state.report), secrets)
        err(f"gsg: {verb} blocked: {len(state.errors)} validation error(s)", secrets)
        return True
    if not state.rendered and prune and not allow_empty and state.identity is not None:
        raise GsgError(f"no specs: refusing to prune every model of project '{state.identity.name}' "
                       "(pass --allow-empty to mean it)")
    return False


def claims_for(state: DesiredState, *, adopt: bool = False, claim_legacy: bool = False,
               take_over_from: tuple[str, ...] | list[str] = ()) -> Claims:
    """What this run may take beyond its own project's models; the options that need a project say so."""
    from gpustack_guard.core.ownership import Claims

    project = state.identity.name if state.identity is not None else None
    if project is None and (claim_legacy or take_over_from):
        flag = "--claim-legacy" if claim_legacy else "--take-over-from"
        raise GsgError(f"{flag} needs a project identity to record: add a gsg.yaml with `project: NAME` at the "
                       "spec root, or pass --project NAME (GSG_PROJECT)")
    if project in take_over_from:
        raise GsgError(f"--take-over-from {project}: that is this run's own project")
    return Claims(project, adopt=adopt, claim_legacy=claim_legacy, take_over_from=frozenset(take_over_from))


def build_plan(state: DesiredState, *, prune: bool, targets: tuple[str, ...] | list[str], claims: Claims
               ) -> list[Change]:
    """The changes for plan and apply alike; --target names must exist on one side or the other."""
    from gpustack_guard.adapters.files.output import note
    from gpustack_guard.core.deploy.plan import plan

    chosen = set(targets) if targets else None
    changes = plan(state.rendered, state.live_models, state.cluster_names, claims=claims, prune=prune,
                   recorded=state.recorded, targets=chosen, removals=state.removals)
    if chosen:
        excluded = sorted(chosen & set(state.removals.excluded))
        if excluded:
            raise GsgError(f"--target {excluded[0]}: overlay '{state.removals.overlay}' excludes it from this "
                           f"context ({state.removals.excluded[excluded[0]]})")
        known = {r.name for r in state.rendered} | {m["name"] for m in state.live_models}
        unknown = sorted(chosen - known)
        if unknown:
            raise GsgError(f"--target {', '.join(unknown)} matches no spec and no live model")
        note(f"gsg: targeting {', '.join(sorted(chosen))}: other deployments are left alone")
    return changes
