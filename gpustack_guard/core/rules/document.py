"""Rules about the documents themselves and their cluster (no GPU arithmetic)."""

from __future__ import annotations

from collections import defaultdict

from gpustack_guard.core import findings as F
from gpustack_guard.core.rules import Context, Evaluation, fleet_rule, spec_rule


@spec_rule("document")
def cluster_exists(ev: Evaluation, ctx: Context):
    """Resolve cluster_name against the fleet (a single-cluster fleet may omit it)."""
    if ctx.fleet is None:
        return
    spec, doc = ev.rendered.spec, ev.rendered.doc
    cluster = ctx.fleet.cluster(spec.cluster_name)
    if cluster is not None:
        ev.cluster = cluster
        return
    ev.blocked = True
    known = ", ".join(c.name for c in ctx.fleet.clusters) or "none"
    if spec.cluster_name is None:
        yield F.finding(F.CLUSTER, doc.at("name"), f"cluster_name is required: the fleet has several clusters "
                        f"({known})", spec=spec.name, fix="add 'cluster_name:'")
    else:
        yield F.finding(F.CLUSTER, doc.at("cluster_name"), f"cluster '{spec.cluster_name}' is not in the fleet "
                        f"(known: {known})", spec=spec.name)


@fleet_rule
def unique_names(ctx: Context):
    """Model names are unique per organisation; gsg checks them per cluster."""
    seen: dict[tuple, list[Evaluation]] = defaultdict(list)
    for ev in ctx.evaluations:
        cluster = ev.cluster.name if ev.cluster else ev.rendered.spec.cluster_name
        seen[(cluster, ev.rendered.name)].append(ev)
    for (cluster, name), group in seen.items():
        first = group[0].rendered.doc
        for ev in group[1:]:
            yield F.finding(F.DUPLICATE_NAME, ev.rendered.doc.at("name"),
                            f"model name '{name}' is already declared at {first.at('name')}"
                            + (f" for cluster '{cluster}'" if cluster else ""), spec=name,
                            fix="rename one of them")
