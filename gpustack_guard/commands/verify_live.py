"""gsg verify SPECS: every running instance of the deployments this project owns, its engine's start-up log held
against the spec's estimate on that instance's own GPUs (KV tokens and headroom), findings GSG044 and GSG045.

Reading is bounded per instance (LogLimits, the request deadline) and over the command (GSG_COMMAND_DEADLINE);
an instance whose log cannot be had or read is one line and the run goes on.

Exit codes: 0 every running instance verified without a finding at or above --fail-level; 1 a finding at or above
it, or a running instance that could not be verified (refused, empty, binary, HTML, JSON or unknown log, another
engine's or model's log, no KV pool logged, no estimate, an instance naming another model), or a user error; 3 a
bug in gsg.
"""

from __future__ import annotations

import json

from gpustack_guard import wiring
from gpustack_guard.adapters.files.logs import LogLimits
from gpustack_guard.adapters.files.output import note, out
from gpustack_guard.adapters.gpustack.logs import LiveInstance, live_instances, read_instance_log
from gpustack_guard.core import echo
from gpustack_guard.core.deploy.plan import cluster_name_of
from gpustack_guard.core.errors import EXIT_FAIL, EXIT_OK, GsgError
from gpustack_guard.core.findings import Finding, Severity
from gpustack_guard.core.fleet.model import Fleet, GpuRef
from gpustack_guard.core.memory import engine
from gpustack_guard.core.ownership import LEGACY, PROJECT_OWNED, Claims, owner
from gpustack_guard.core.pipeline import Report
from gpustack_guard.core.units import gib
from gpustack_guard.core.values import frozen_value
from gpustack_guard.core.verify import compare as C
from gpustack_guard.core.verify import live as L
from gpustack_guard.core.verify.logparse import mask_secrets
from gpustack_guard.reporters import REPORTERS, ReportFormat, json_head, resolve_format
from gpustack_guard.reporters.markdown import untrusted_cell

FORMAT_VERSION = "1.0"  # of the live verify JSON document; minor: additive, major: breaking
OWN_FORMATS = ("text", "json", "markdown")  # verify's per-instance report; the others carry the findings only
VERIFIED, NOT_VERIFIED, SKIPPED = "verified", "not-verified", "skipped"


@frozen_value(eq=True, repr=True)
class LiveVerifyOptions:
    sources: wiring.SpecSources
    connection: wiring.ConnectionOptions
    output: ReportFormat = ReportFormat.TEXT
    tolerance_percent: float = C.DEFAULT_TOLERANCE_PERCENT
    fail_level: Severity = Severity.WARNING


def _ours(model: dict, claims: Claims) -> tuple[bool, str]:
    """Whether this run answers for a live model (its project's, or without a project a legacy marker)."""
    found = owner(model)
    mine = found.kind == LEGACY if claims.project is None else \
        found.kind == PROJECT_OWNED and found.project == claims.project
    return mine, "" if mine else f"the live model is owned by {found.describe()}, not this project: not verified"


def _gpus(instance: LiveInstance, fleet: Fleet, cluster: str | None) -> tuple[list[GpuRef], str | None]:
    """The instance's GPUs as the live fleet describes them, leader first."""
    clusters = [c for c in fleet.clusters if cluster is None or c.name == cluster]
    workers = {w.name: w for c in clusters for w in c.workers}
    found: list[GpuRef] = []
    for name, indexes in instance.places:
        worker = workers.get(name)
        if worker is None:
            return [], f"worker '{echo.value(name, 80)}' is not in the live fleet"
        by_index = {g.index: g for g in worker.gpus}
        for index in indexes:
            if index not in by_index:
                return [], f"worker '{echo.value(name, 80)}' has no GPU {index} in the live fleet"
            found.append(GpuRef(worker, by_index[index]))
    if not found:
        return [], "the server names no GPU for this instance"
    return found, None


class _Run:
    """One verify run: the deployments' records, the findings, and the secrets logs showed."""

    def __init__(self, opts: LiveVerifyOptions, limits: LogLimits):
        self.opts, self.limits = opts, limits
        self.findings: list[Finding] = []
        self.secrets: list[str] = []
        self.deployments: list[dict] = []

    def instance(self, client, ev, live: LiveInstance, model: dict, fleet: Fleet, cluster: str | None) -> dict:
        base = {"instance": live.name, "id": live.id, "worker": live.worker, "state": live.state}
        if live.model_name and live.model_name != model["name"]:  # the list's two fields disagree: read neither
            return {**base, "status": NOT_VERIFIED,
                    "problem": f"the server lists it under model id {model['id']} ('{echo.value(model['name'], 80)}') "
                               f"but names its model '{echo.value(live.model_name, 80)}': whose instance it is "
                               "cannot be told, its log was not read"}
        if live.state != "running":
            return {**base, "status": SKIPPED, "problem": f"{live.state}, not running: not verified"}
        gpus, problem = _gpus(live, fleet, cluster)
        if problem:
            return {**base, "status": NOT_VERIFIED, "problem": problem}
        base["gpus"] = [g.id for g in gpus]
        try:
            est = L.estimate_on(ev.rendered, gpus)
        except ValueError as exc:
            return {**base, "status": NOT_VERIFIED, "problem": f"no estimate on its GPUs: {exc}"}
        watch = L.StartUpWatch()
        read = read_instance_log(client, live.id, self.limits, watch.feed)
        if read.problem:
            return {**base, "status": NOT_VERIFIED, "problem": read.problem, "notes": read.notes}
        log, secrets = watch.result()
        self.secrets += secrets
        if log.engine is None:
            return {**base, "status": NOT_VERIFIED, "notes": read.notes,
                    "problem": f"no start-up line of vLLM, SGLang or llama.cpp in its {read.lines:,} line(s): "
                               "a log format gsg does not know, or the start-up part was rotated away"}
        mismatch = L.engine_mismatch(ev.rendered, log) or L.model_mismatch(ev.rendered, log) \
            or L.nothing_to_compare(log)
        if mismatch:
            return {**base, "status": NOT_VERIFIED, "problem": mismatch, "notes": read.notes}
        seen = L.env_seen_in(ev.rendered, log)
        if seen is not None:  # the log printed a path the spec's env did not set: estimate what ran
            try:
                est = L.estimate_on(ev.rendered, gpus, seen)
            except ValueError as exc:
                return {**base, "status": NOT_VERIFIED, "problem": f"no estimate on its GPUs: {exc}",
                        "notes": read.notes}
        instance = L.Instance(live.id, live.name, live.worker, tuple(g.id for g in gpus))
        verified = L.verify_instance(ev, instance, est, log, self.opts.tolerance_percent)
        self.findings += verified.findings
        record = {**base, "status": VERIFIED, "problem": None, **verified.record, "lines_read": read.lines}
        record["notes"] = read.notes + record["notes"]
        return record

    def deployment(self, client, ev, live_models: list[dict], instances: list[LiveInstance], fleet: Fleet,
                   claims: Claims, cluster_names: dict[int, str]) -> dict:
        r = ev.rendered
        location = r.doc.at("name")
        record: dict = {"name": r.name, "spec_file": location.file, "line": location.line, "backend": r.spec.backend,
                        "model_id": None, "instances": [], "note": None}
        wanted = r.spec.cluster_name
        models = [m for m in live_models if m["name"] == r.name
                  and (wanted is None or cluster_name_of(m, cluster_names) in (wanted, None))]
        if not models:
            record["note"] = "no live model of this name: not deployed"
            return record
        if len(models) > 1:  # as plan's conflict: verifying the first listed would judge a model picked by order
            ids = ", ".join(str(m["id"]) for m in models[:5]) + (", ..." if len(models) > 5 else "")
            record["note"] = (f"not verified: the server lists {len(models)} models of this name (ids {ids}); "
                              "which one runs this spec cannot be told")
            record["unverified"] = True
            return record
        model = models[0]
        record["model_id"] = model["id"]
        mine, why = _ours(model, claims)
        if not mine:
            record["note"] = why
            return record
        if r.family not in engine.ENGINES:
            record["note"] = f"backend {r.spec.backend} has no memory arithmetic: nothing to verify"
            return record
        if ev.failure is not None and r.facts is None:
            record["note"] = f"not verified: {ev.failure.message}"
            record["unverified"] = True
            return record
        mine_live = [i for i in instances if i.model_id == model["id"]]
        if not mine_live:
            record["note"] = "no instance on the server"
        cluster = cluster_name_of(model, cluster_names)
        record["instances"] = [self.instance(client, ev, live, model, fleet, cluster) for live in mine_live]
        return record


def _checked(opts: LiveVerifyOptions) -> None:
    problem = C.tolerance_problem(opts.tolerance_percent)
    if problem:
        raise GsgError(problem)


def run(opts: LiveVerifyOptions) -> int:
    _checked(opts)
    limits = LogLimits.from_env()
    connection = wiring.connect(opts.connection)
    state = wiring.load_desired(connection, opts.sources)
    fleet = connection.last_fleet
    assert fleet is not None  # load_desired fetched it
    claims = wiring.claims_for(state)
    instances = live_instances(connection.client)
    job = _Run(opts, limits)
    evaluations = sorted(state.report.evaluations, key=lambda ev: (ev.rendered.doc.file, ev.rendered.doc.index))
    for ev in evaluations:
        job.deployments.append(job.deployment(connection.client, ev, state.live_models, instances, fleet, claims,
                                              state.cluster_names))
    suppressed = _accepted(job, state)
    doc = document(job, connection.client.base_url, connection.version, opts)
    secrets = state.report.secret_values + job.secrets
    chosen = resolve_format(opts.output)
    if chosen in OWN_FORMATS:
        text = {"text": render_text, "json": render_json, "markdown": render_markdown}[chosen](doc, job.findings)
        out(mask_secrets(text), secrets)
    else:
        report = Report(sorted(job.findings, key=lambda f: (f.location.file, f.location.line, f.rule.id)),
                        files=len({d["spec_file"] for d in job.deployments}), specs=len(job.deployments),
                        units=[(d["spec_file"], echo.spec_name(d["name"])) for d in job.deployments],
                        suppressed=suppressed)
        out(REPORTERS[chosen](report, fail_level=opts.fail_level), secrets)
        for line in problem_lines(doc):  # what the findings formats cannot carry: one line each on stderr
            note(f"gsg: verify: {line}", secrets)
    note(f"gsg: {summary(doc)}", secrets)
    return EXIT_FAIL if doc["result"] == "fail" else EXIT_OK


def _accepted(job: _Run, state: wiring.DesiredState) -> list:
    """GSG044/GSG045 through gsg.yaml's select/ignore/per_path_ignores and --select/--ignore, as validate's
    findings go (kept as suppressed for SARIF). Inline comments are validate's: they name the spec lines its
    rules report, and held against verify's findings they would all read as unused. Returns the suppressed."""
    if state.acceptance is None:
        return []
    job.findings, suppressed = state.acceptance.select(job.findings)
    return suppressed


def document(job: _Run, server: str, version: str, opts: LiveVerifyOptions) -> dict:
    instances = [i for d in job.deployments for i in d["instances"]]
    failing = [f for f in job.findings if f.severity.rank >= opts.fail_level.rank]
    unverified = [i for i in instances if i["status"] == NOT_VERIFIED]
    unverified_specs = [d for d in job.deployments if d.get("unverified")]
    return {
        **json_head(FORMAT_VERSION), "server": server, "server_version": version,
        "tolerance_percent": opts.tolerance_percent, "fail_level": opts.fail_level.value,
        "deployments": job.deployments,
        "findings": [{"rule_id": f.rule.id, "rule": f.rule.name, "severity": f.severity.value,
                      "file": f.location.file, "line": f.location.line, "column": f.location.column,
                      "spec": f.spec, "message": f.message, "fix": f.fix, "data": f.data} for f in job.findings],
        "counts": {"deployments": len(job.deployments), "instances": len(instances),
                   "verified": sum(i["status"] == VERIFIED for i in instances), "not_verified": len(unverified),
                   "skipped": sum(i["status"] == SKIPPED for i in instances), "findings": len(job.findings)},
        "result": "fail" if failing or unverified or unverified_specs else "pass",
    }


def summary(doc: dict) -> str:
    c = doc["counts"]
    return (f"verify: {c['verified']} of {c['instances']} instance(s) verified in {c['deployments']} deployment(s), "
            f"{c['not_verified']} not verified, {c['skipped']} not running, {c['findings']} finding(s): "
            f"{doc['result']}")


def problem_lines(doc: dict) -> list[str]:
    lines = []
    for d in doc["deployments"]:
        if d.get("unverified"):
            lines.append(f"{d['name']} ({d['spec_file']}:{d['line']}): {d['note']}")
        for i in d["instances"]:
            if i["status"] == NOT_VERIFIED:
                lines.append(f"{d['name']}: instance {i['instance']} on {i['worker'] or '(no worker)'}: "
                             f"{i['problem']}")
    return [echo.message(line, 500) for line in lines]


def _tokens(value) -> str:
    return f"{int(value):,}" if value is not None else "-"


def instance_line(i: dict) -> str:
    """One instance in one line: KV tokens logged against estimated, and the headroom over the workload."""
    where = f"instance {i['instance']} on {i['worker'] or '(no worker)'}"
    if i["status"] != VERIFIED:
        return f"{where}: {'not verified: ' if i['status'] == NOT_VERIFIED else ''}{i['problem']}"
    kv = i["kv_capacity_tokens"] or {}
    engine_name = L.ENGINE_NAME.get(i["engine"], "?") + (f" {i['engine_version']}" if i["engine_version"] else "")
    percent = f" ({kv['percent']:+.1f} %)" if kv.get("percent") is not None else ""
    w = i["workload"]
    head = (f"headroom {_tokens(w['headroom_observed_tokens'])} logged, {_tokens(w['headroom_estimated_tokens'])} "
            f"estimated over {w['needed_tokens']:,} needed ({w['basis']}, {w['sequences']} sequences)")
    status = "started" if i["started"] else (f"failed: {i['failure']}" if i["failure"] else "no start-up outcome")
    return (f"{where} [{', '.join(i['gpus'])}] {engine_name}, {status}: KV {_tokens(kv.get('observed'))} tokens "
            f"logged, {_tokens(kv.get('estimated'))} estimated{percent}; {head}")


def _kv_bytes(i: dict) -> str:
    seen, est = i["observed"].get("kv_cache_bytes_per_gpu"), i["estimated"].get("kv_cache_bytes_per_gpu")
    shown = [gib(value) if value is not None else "-" for value in (seen, est)]
    return f"KV cache per GPU {shown[0]} logged, {shown[1]} estimated"


def render_text(doc: dict, findings: list[Finding]) -> str:
    lines = [f"gsg verify: {doc['server']} (GPUStack {doc['server_version']}), KV tolerance "
             f"{doc['tolerance_percent']:g} %"]
    for d in doc["deployments"]:
        lines.append("")
        lines.append(f"{d['name']} ({d['spec_file']}:{d['line']}, {d['backend']})" +
                     (f": {d['note']}" if d["note"] else ""))
        for i in d["instances"]:
            lines.append(f"  {instance_line(i)}")
            if i["status"] == VERIFIED and "kv_cache_bytes_per_gpu" in i["observed"]:
                lines.append(f"    {_kv_bytes(i)}")
            lines += [f"    note: {n}" for n in i.get("notes") or ()]
    if findings:
        lines.append("")
        lines += REPORTERS["text"](Report(findings)).rstrip("\n").splitlines()
    lines += ["", f"result: {summary(doc)}"]
    return "\n".join(echo.message(line, 2000) for line in lines) + "\n"


def render_json(doc: dict, findings: list[Finding]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=True) + "\n"


def render_markdown(doc: dict, findings: list[Finding]) -> str:
    lines = [f"## gsg verify: {untrusted_cell(doc['server'])}", "",
             "| deployment | instance | worker | KV logged | KV estimated | difference | headroom logged | status |",
             "|---|---|---|---:|---:|---:|---:|---|"]
    for d in doc["deployments"]:
        name = f"{untrusted_cell(d['name'])} (`{untrusted_cell(d['spec_file'])}:{d['line']}`)"
        if not d["instances"]:
            lines.append(f"| {name} | | | | | | | {untrusted_cell(d['note'] or '')} |")
        for i in d["instances"]:
            kv = i.get("kv_capacity_tokens") or {}
            diff = f"{kv['percent']:+.1f} %" if kv.get("percent") is not None else ""
            headroom = _tokens((i.get("workload") or {}).get("headroom_observed_tokens"))
            status = i["status"] if i["status"] == VERIFIED else f"{i['status']}: {i['problem']}"
            lines.append(f"| {name} | {untrusted_cell(i['instance'])} | {untrusted_cell(i['worker'])} | "
                         f"{_tokens(kv.get('observed'))} | {_tokens(kv.get('estimated'))} | {diff} | {headroom} | "
                         f"{untrusted_cell(status)} |")
    if findings:
        lines += ["", "| severity | rule | location | message |", "|---|---|---|---|"]
        lines += [f"| {f.severity.value} | {f.rule.id} | `{untrusted_cell(str(f.location))}` | "
                  f"{untrusted_cell(f.message)} |" for f in findings]
    lines += ["", f"Result: **{doc['result']}** ({untrusted_cell(summary(doc))})"]
    return "\n".join(lines) + "\n"
