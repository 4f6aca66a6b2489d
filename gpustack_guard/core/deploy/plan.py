"""Planning (pure): desired documents against live GPUStack models -> a list of Changes.

Diff hygiene follows GPUStack's own importer: only fields the spec sets are compared (so server-filled
fields never show), None/{}/[] are equal, backend_parameters compare normalised, env secrets are masked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from gpustack_guard.core import args as A
from gpustack_guard.core import echo
from gpustack_guard.core.deploy.ignore import keep_live
from gpustack_guard.core.deploy.removals import NO_REMOVALS, OverlayRemovals
from gpustack_guard.core.ownership import LEGACY, PROJECT_OWNED, RESTART_PENDING, Claims, Owner, digest, owner
from gpustack_guard.core.secrets import mask_args, masked
from gpustack_guard.core.values import frozen_value

CREATE, UPDATE, REPLACE, DELETE, NOOP, CONFLICT = "create", "update", "replace", "delete", "noop", "conflict"
LEGACY_OWNED = "legacy"  # information: a legacy-marked model no spec of this project declares; never pruned
SYMBOL = {CREATE: "+", UPDATE: "~", REPLACE: "-/+", DELETE: "-", NOOP: " ", CONFLICT: "!", LEGACY_OWNED: "?"}
IDENTITY = ("source", "huggingface_repo_id", "huggingface_filename", "model_scope_model_id",
            "model_scope_file_path", "local_path", "cluster_name")
NO_RESTART = {"replicas", "description", "categories"}
NOT_COMPARED = {"name", "enable_model_route"}  # create-only / the key itself
# What the server changes by itself (status, timestamps, scheduler fills): never a reason to refuse a saved plan.
# Every status field of ModelPublic that ModelUpdate lacks is among them (GPUStack 2.3.0's OpenAPI document): 2.3
# answers has_stale_lora_instances on a GET of one model as it sees fit, so a plan read from the list differed.
SERVER_VOLATILE = {"ready_replicas", "state", "state_message", "restarting_since", "updated_at", "categories",
                   "distributable", "backend_version", "role_status", "stale", "degradations",
                   "has_stale_lora_instances"}


@frozen_value(eq=True, repr=True)
class FieldChange:
    """One field of a deployment: its live value and the spec's."""

    field: str
    before: Any
    after: Any


@dataclass
class Change:
    """What apply would do to one deployment, and why."""

    action: str
    name: str
    cluster: str | None
    spec_file: str | None = None
    wave: int = 0
    fields: list[FieldChange] = field(default_factory=list)
    restart: bool = False
    adopt: bool = False  # the ownership marker is (re)written to this project: adopt, claim or take-over
    owner: Owner | None = None  # who owned the live model at plan time
    project: str | None = None  # the project the marker will name (None: legacy path-only marker)
    marker_spec: str | None = None  # the spec path the marker records (relative to the project root)
    live: dict | None = None  # the live model as seen at plan time
    rendered: Any = None  # RenderedSpec for create/update/replace
    reason: str = ""
    deleted_by: str | None = None  # the overlay line (`$patch: delete`) that asks for this delete; None: prune

    @property
    def symbol(self) -> str:
        return SYMBOL[self.action]

    @property
    def is_change(self) -> bool:
        return self.action in (CREATE, UPDATE, REPLACE, DELETE)

    @property
    def scale_down_only(self) -> bool:
        return self.action == UPDATE and [f.field for f in self.fields] == ["replicas"] and \
            (self.fields[0].after or 0) < (self.fields[0].before or 0)


def _empty(value: Any) -> bool:
    return value is None or value == {} or value == []


def _normal_args(value: Any, family: str) -> Any:
    if not isinstance(value, list):
        return value
    try:
        return sorted((a.key, A.normal_value(a.value)) for a in A.parse(value, family))
    except A.ArgError:
        return value


def same(field_name: str, desired: Any, live: Any, family: str = "vllm") -> bool:
    if _empty(desired) and _empty(live):
        return True
    if field_name == "backend_parameters":
        return _normal_args(desired or [], family) == _normal_args(live or [], family)
    if isinstance(desired, dict) and isinstance(live, dict):
        # nested objects: only the keys the spec sets (e.g. gpu_selector.gpus_per_replica is server-filled)
        return all(same(f"{field_name}.{k}", v, live.get(k), family) for k, v in desired.items())
    return desired == live


def field_changes(desired: dict, live: dict, family: str, secret_keys: set[str],
                  secret_flags: frozenset[str] = frozenset()) -> list[FieldChange]:
    changes = []
    for key, want in desired.items():
        if key in NOT_COMPARED:
            continue
        have = live.get(key)
        if same(key, want, have, family):
            continue
        if key == "env":
            want, have = masked(want or {}, secret_keys), masked(have or {}, secret_keys)
        if key == "backend_parameters":
            want, have = mask_args(want, secret_flags), mask_args(have, secret_flags)
        changes.append(FieldChange(key, have, want))
    return changes


def desired_against(desired: dict, live: dict, cluster_names: Mapping[int, str]) -> tuple[dict, dict]:
    """The desired document and the live one, ready to compare: a spec without a cluster takes the live one's."""
    current = live_document(live, cluster_names)
    if desired.get("cluster_name") is None:
        desired = {**desired, "cluster_name": current["cluster_name"]}  # single cluster: whatever it is
    return desired, current


def comparable(rendered: Any, live: dict, cluster_names: Mapping[int, str]) -> tuple[dict, dict]:
    """The spec's document and the live one, ready to compare: the parts the spec lets live keep are live's."""
    desired, current = desired_against(rendered.document(show_secrets=True), live, cluster_names)
    return keep_live(desired, current, rendered.spec.guard.ignore_differences, rendered.family), current


def unapplied(rendered: Any, live: dict, cluster_names: Mapping[int, str]) -> list[FieldChange]:
    """The fields in which a live model still differs from its spec (empty once a write has landed)."""
    desired, current = comparable(rendered, live, cluster_names)
    return field_changes(desired, current, rendered.family, rendered.secret_keys, rendered.secret_flags)


def restart_pending(model: Mapping[str, Any]) -> bool:
    """An earlier apply updated this model and had not seen its restart go through (the marker is cleared after)."""
    meta = model.get("meta")
    return isinstance(meta, Mapping) and RESTART_PENDING in meta


def cluster_name_of(model: Mapping[str, Any], cluster_names: Mapping[int, str]) -> str | None:
    """The name of the cluster a live model runs on (None: no cluster_id, or one the fleet does not list)."""
    cluster_id = model.get("cluster_id")
    return None if cluster_id is None else cluster_names.get(cluster_id)


def live_document(model: dict, cluster_names: Mapping[int, str]) -> dict:
    """The live model with cluster_name, for comparison with a desired document."""
    return {**model, "cluster_name": cluster_name_of(model, cluster_names)}


def _recorded(recorded: Mapping[str, str] | None, shown: str) -> str:
    return recorded.get(shown, shown) if recorded is not None else shown


def plan(rendered: list, live_models: list[dict], cluster_names: dict[int, str], *, claims: Claims | None = None,
         prune: bool = False, recorded: Mapping[str, str] | None = None,
         targets: set[str] | None = None, removals: OverlayRemovals = NO_REMOVALS) -> list[Change]:
    """Changes per model. `rendered` are RenderedSpecs; live models are GPUStack ModelPublic dicts. `claims` says
    which project this run speaks for and what else it may take; `recorded` maps a spec's displayed path to the
    path its marker records. Prune deletes only models whose marker names this run's project (the caller makes
    sure the whole project was read); a legacy-marked model is never deleted. `removals` are the context
    overlay's excluded names (left out entirely) and deleted names (deleted when this project's own, else a
    conflict: the same ownership rule as prune)."""
    return plan_managed(rendered, removals.managed(live_models), cluster_names, claims=claims, prune=prune,
                        recorded=recorded, targets=targets, removals=removals)


def plan_managed(rendered: list, live_models: list[dict], cluster_names: dict[int, str], *,
                 claims: Claims | None = None, prune: bool = False, recorded: Mapping[str, str] | None = None,
                 targets: set[str] | None = None, removals: OverlayRemovals = NO_REMOVALS) -> list[Change]:
    """plan() over live models the overlay's exclusions are already out of (`removals.managed`): for a caller
    that reads the same managed list itself (drift), so the overlay is applied once."""
    claims = claims or Claims(project=None)
    if prune and claims.project is None:
        raise ValueError("prune needs a project identity")
    by_name: dict[str, list[dict]] = {}
    for m in live_models:
        by_name.setdefault(m["name"], []).append(m)
    changes: list[Change] = []
    declared = set()
    names = {r.name for r in rendered}
    lookalikes = _lookalikes(live_models, names)
    for r in rendered:
        declared.add(r.name)
        cluster = r.spec.cluster_name
        same_name = by_name.get(r.name) or []
        base = dict(name=r.name, cluster=cluster, spec_file=r.doc.file, wave=r.spec.guard.wave, rendered=r,
                    project=claims.project, marker_spec=_recorded(recorded, r.doc.file))
        if not same_name:
            # a live model of another name that looks like this one (a server that lists names case-folded,
            # re-normalised or padded) is a conflict: a create would stand next to the running model, and prune
            # would delete that model
            look = lookalikes.get(_look(r.name))
            changes.append(Change(CONFLICT, **base, reason=_looks_alike(look)) if look else
                           Change(CREATE, **base, fields=[FieldChange(k, None, v) for k, v in
                                                          r.document().items() if k != "name"]))
            continue
        if len(same_name) > 1:  # names are unique per organisation: a platform admin's view, or a broken server
            changes.append(Change(CONFLICT, **base, reason=_ambiguous(same_name)))
            continue
        live = same_name[0]
        desired, current = comparable(r, live, cluster_names)
        if cluster is None:
            base["cluster"] = current["cluster_name"]
        found = owner(live)
        allowed, why_not = claims.may_manage(found, adopt=r.spec.guard.adopt)
        if not allowed:
            changes.append(Change(CONFLICT, **base, owner=found, live=live, reason=why_not))
            continue
        taking = claims.takes_ownership(found)
        diffs = field_changes(desired, current, r.family, r.secret_keys, r.secret_flags)
        identity = [d for d in diffs if d.field in IDENTITY]
        if identity:
            changes.append(Change(REPLACE, **base, owner=found, live=live, fields=diffs,
                                  reason=", ".join(f"{d.field} changed" for d in identity)))
        elif diffs or taking or restart_pending(live):
            pending = restart_pending(live)
            restart = pending or any(d.field not in NO_RESTART for d in diffs)
            changes.append(Change(UPDATE, **base, owner=found, live=live, fields=diffs, restart=restart,
                                  adopt=taking, reason=PENDING_REASON if pending else ""))
        else:
            changes.append(Change(NOOP, **base, owner=found, live=live))
    for model in live_models:
        if model["name"] in declared:
            continue
        if model["name"] in removals.deleted:
            changes.extend(_overlay_delete(model, by_name[model["name"]], claims, cluster_names, removals))
            continue
        if claims.project is None:
            continue
        found = owner(model)
        kept = _kept_from_prune(model, names, lookalikes, cluster_names) if prune else None
        if kept is not None and _owned_by(model, claims.project):
            changes.append(kept)
            continue
        twins = by_name[model["name"]]
        if len(twins) > 1:  # prune deletes by id: two of one name are refused, not guessed between
            if prune and model is twins[0] and any(_owned_by(m, claims.project) for m in twins):
                changes.append(Change(CONFLICT, model["name"], cluster_name_of(model, cluster_names),
                                      reason=_ambiguous(twins) + "; prune leaves them alone"))
            continue
        cluster_name = cluster_name_of(model, cluster_names)
        if prune and found.kind == PROJECT_OWNED and found.project == claims.project:
            changes.append(Change(DELETE, model["name"], cluster_name, spec_file=found.spec_file, owner=found,
                                  project=claims.project, live=model, reason="no spec of this project declares it"))
        elif found.kind == LEGACY:
            recorded_as = f", recorded spec {found.spec_file}" if found.spec_file else ""
            changes.append(Change(LEGACY_OWNED, model["name"], cluster_name, owner=found, live=model,
                                  reason=f"gsg marker without a project{recorded_as}; declared by no spec here: "
                                  "prune never deletes it"))
    if targets is not None:
        changes = [c for c in changes if c.name in targets]
    return changes


PENDING_REASON = "an earlier apply updated it, but its restart was not confirmed"


def _overlay_delete(model: dict, twins: list[dict], claims: Claims, cluster_names: Mapping[int, str],
                    removals: OverlayRemovals) -> list[Change]:
    """A live model the context's overlay wants gone: deleted only when its marker names this run's project
    (as prune); anything else is a conflict that says why, so apply stops instead of quietly keeping it."""
    name = model["name"]
    where = removals.deleted[name]
    asked = f"overlay '{removals.overlay}' deletes it ({where})"
    cluster = cluster_name_of(model, cluster_names)
    found = owner(model)
    if len(twins) > 1:
        return [Change(CONFLICT, name, cluster, reason=f"{asked}, but {_ambiguous(twins)}")] \
            if model is twins[0] else []
    if claims.project is None:
        return [Change(CONFLICT, name, cluster, owner=found, live=model,
                       reason=f"{asked}, but without a project identity gsg cannot tell it is this "
                              "repository's model (declare `project:` in gsg.yaml or pass --project)")]
    if found.kind == PROJECT_OWNED and found.project == claims.project:
        return [Change(DELETE, name, cluster, spec_file=found.spec_file, owner=found, project=claims.project,
                       live=model, reason=asked, deleted_by=where)]
    held = f"project '{found.project}' owns it" if found.kind == PROJECT_OWNED else \
        "it carries a legacy gsg marker without a project" if found.kind == LEGACY else \
        f"it is not managed by gsg{f' (managed by {found.managed_by!r})' if found.managed_by else ''}"
    return [Change(CONFLICT, name, cluster, owner=found, live=model,
                   reason=f"{asked}, but {held}: gsg deletes only models of project '{claims.project}'")]


def _look(name: str) -> str:
    """What a name looks like (echo.name_skeleton), spaces around it ignored: two names of one look are one name to
    a reader, and to a server whose lookups fold case (MySQL's default collation) or strip names."""
    return echo.name_skeleton(name.strip())


def _lookalikes(live_models: list[dict], declared: set[str]) -> dict[str, list[dict]]:
    """Live models whose name is no spec's but looks like one that is, by that look."""
    wanted = {_look(name) for name in declared}
    found: dict[str, list[dict]] = {}
    for model in live_models:
        look = _look(model["name"])
        if model["name"] not in declared and look in wanted:
            found.setdefault(look, []).append(model)
    return found


def _kept_from_prune(model: dict, declared: set[str], lookalikes: Mapping[str, list[dict]],
                     cluster_names: Mapping[int, str]) -> Change | None:
    """A model that no spec declares by name but one does by look: for prune a conflict, never a delete."""
    if _look(model["name"]) not in lookalikes:
        return None
    declared_as = next(n for n in sorted(declared) if _look(n) == _look(model["name"]))
    return Change(CONFLICT, model["name"], cluster_name_of(model, cluster_names), live=model,
                  reason=f"declared by no spec, but its name looks the same as the spec name "
                         f"'{echo.value(declared_as)}': prune leaves it alone")


def _looks_alike(models: list[dict]) -> str:
    shown = ", ".join(f"'{echo.value(m['name'])}' (id {m['id']})" for m in models[:5])
    more = f" and {len(models) - 5} more" if len(models) > 5 else ""
    return (f"the server lists no model of exactly this name but {shown}{more}, whose name differs only in letter "
            "case, Unicode form, look-alike letters or spaces around it: gsg cannot tell whether it is this spec's "
            "model and creates, updates and deletes none of them")


def _owned_by(model: dict, project: str | None) -> bool:
    found = owner(model)
    return found.kind == PROJECT_OWNED and found.project == project


def _ambiguous(models: list[dict]) -> str:
    ids = ", ".join(str(m["id"]) for m in models)
    return (f"the server lists {len(models)} models of this name (ids {ids}): gsg cannot tell which one is meant "
            "and touches none")


def summary(changes: list[Change]) -> dict[str, int]:
    return {a: sum(1 for c in changes if c.action == a)
            for a in (CREATE, UPDATE, REPLACE, DELETE, CONFLICT, LEGACY_OWNED)}


def summary_line(changes: list[Change]) -> str:
    c = summary(changes)
    legacy = f" {c[LEGACY_OWNED]} legacy-owned model(s) left alone." if c[LEGACY_OWNED] else ""
    if not any(ch.is_change for ch in changes):
        return "No changes. Live deployments match the specs." + (
            f" ({c[CONFLICT]} conflict(s) need attention.)" if c[CONFLICT] else "") + legacy
    line = (f"Plan: {c[CREATE]} to create, {c[UPDATE]} to update, {c[REPLACE]} to replace, "
            f"{c[DELETE]} to delete.")
    return line + (f" {c[CONFLICT]} conflict(s)." if c[CONFLICT] else "") + legacy


def live_digest(model: dict) -> str:
    """What a saved plan saw of a live model, minus what the server rewrites on its own."""
    return digest({k: v for k, v in model.items() if k not in SERVER_VOLATILE})


def desired_digest(change: Change) -> str | None:
    return digest(change.rendered.document()) if change.rendered is not None else None
