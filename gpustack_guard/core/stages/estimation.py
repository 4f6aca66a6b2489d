"""The estimation stage: the engine arithmetic on every replica's GPUs, then each spec's real footprint
folded into its cluster's ledger (for the overcommit rule)."""

from __future__ import annotations

from typing import Mapping, Sequence

from gpustack_guard.core.findings import Location
from gpustack_guard.core.fleet.placement import Ledger
from gpustack_guard.core.memory import engine
from gpustack_guard.core.memory.estimate import NoEstimate, UnsupportedModel
from gpustack_guard.core.memory.weights import param_breakdown
from gpustack_guard.core.render import RenderedSpec
from gpustack_guard.core.stages.results import EstimationFailure, Evaluation, Placed


def estimate_all(placed: Sequence[Placed], ledgers: Mapping[str, Ledger]
                 ) -> tuple[tuple[Evaluation, ...], dict[str, Ledger]]:
    """Estimate every placed spec; returns the evaluations and the ledgers with every footprint added."""
    evaluations = tuple(estimate(p, ledgers.get(p.cluster.name) if p.cluster else None) for p in placed)
    entries: dict[str, list[tuple[str, str, int]]] = {name: [] for name in ledgers}
    for ev in evaluations:
        if ev.failure is None and ev.placement is not None:
            # no estimates for backends without arithmetic (Custom): no footprint either
            assert ev.cluster is not None  # the placement stage places a spec only on its cluster
            for gpus, est in zip(ev.placement.replicas, ev.estimates, strict=bool(ev.estimates)):
                entries[ev.cluster.name] += [(g.id, ev.rendered.name, est.footprint) for g in gpus]
    return evaluations, {name: ledger.with_footprints(entries[name]) for name, ledger in ledgers.items()}


def _source_field(r: RenderedSpec) -> str:
    return {"huggingface": "huggingface_repo_id", "model_scope": "model_scope_model_id"}.get(r.spec.source,
                                                                                           "local_path")


def estimate(placed: Placed, ledger: Ledger | None = None) -> Evaluation:
    """One spec's estimates, one per replica (none when placement failed or the backend has no arithmetic).
    ledger: the cluster before any managed spec lands; what its GPUs already hold (bookings of instances gsg does
    not manage or live usage, whichever is larger) is foreign memory to an engine that sizes from free memory."""
    r = placed.rendered
    if placed.cluster is None or placed.failure is not None or placed.parked or r.family not in engine.ENGINES:
        return Evaluation(placed)
    if r.facts is None:
        return Evaluation(placed, failure=EstimationFailure(
            NoEstimate.NO_FACTS, f"no memory arithmetic possible: {r.facts_error}",
            r.doc.at(r.spec.source and _source_field(r))))
    if not r.facts.layer_weight_bytes and not r.facts.weight_bytes:
        try:
            param_breakdown(r.facts)
        except ValueError as exc:
            return Evaluation(placed, failure=EstimationFailure(
                NoEstimate.WEIGHTS_UNKNOWN, f"weight bytes unknown ({exc} in {r.facts.source})",
                r.doc.at("guard", "model")))
    if placed.placement is None:
        return Evaluation(placed)
    estimates = []
    for replica, gpus in enumerate(placed.placement.replicas):
        try:  # the flags the engine runs with: the worker adds the parallel sizes the spec leaves out
            # foreign memory moves SGLang's pool only; worked out for SGLang alone (10,000 specs, 9,000 on vLLM:
            # ~10 ms of lookups; docs/performance.md, twelfth round)
            foreign = max((ledger.occupied_before(g.id) for g in gpus), default=0) \
                if ledger is not None and r.family == "sglang" else 0
            estimates.append(engine.estimate(r.family, r.facts, [(g.total, g.gpu.name) for g in gpus],
                                             placed.flags(replica),
                                             r.spec.backend_version, r.spec.guard.policy,
                                             # the env the deployment is sent (the template's, references
                                             # resolved), which render checked (LLAMA_ARG_ values, GSG016)
                                             env=r.env,
                                             foreign=foreign))
        except UnsupportedModel as exc:
            failure = EstimationFailure(NoEstimate.UNSUPPORTED_MODEL, str(exc), r.doc.at("backend"))
            return Evaluation(placed, tuple(estimates), failure)
        except ValueError as exc:
            failure = EstimationFailure(NoEstimate.BAD_ARGUMENTS, str(exc), _arguments_location(r, str(exc)),
                                        warning=getattr(exc, "warning", False))
            return Evaluation(placed, tuple(estimates), failure)
    return Evaluation(placed, tuple(estimates))


def _arguments_location(r: RenderedSpec, message: str) -> Location:
    """Where the argument a message names came from: the spec's own entry, else the guard.template line that
    rendered it (never the document's first line, where a spec without backend_parameters would point)."""
    import re

    from gpustack_guard.core import args as A

    variable = re.match(r"env (LLAMA_ARG_[A-Z0-9_]+) ", message)  # engine.EnvValueError: the env key's line
    if variable and variable.group(1) in (r.spec.env or {}):
        return r.doc.at("env", variable.group(1))
    named = {m.lstrip("-") for m in re.findall(r"--[a-z0-9][a-z0-9-]*", message)}
    try:
        own = A.parse(r.spec.backend_parameters, r.family, r.spec.backend_version)
    except A.ArgError:
        own = []
    for arg in reversed(own):
        if arg.key in named:
            return r.doc.at("backend_parameters", arg.index)
    if r.spec.guard.template and (named or r.spec.backend_parameters is None):
        return r.doc.at("guard", "template")
    return r.doc.at("backend_parameters") if r.spec.backend_parameters is not None else r.doc.at("name")

