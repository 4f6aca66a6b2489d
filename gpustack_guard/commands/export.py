"""gsg export: adopt live deployments as spec files (one per model)."""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from pathlib import Path

from gpustack_guard import wiring
from gpustack_guard.adapters.files.output import err, note, would_change, write_all_atomic, written_form
from gpustack_guard.adapters.files.yaml_dump import comment, dump
from gpustack_guard.adapters.gpustack.client import ApiError
from gpustack_guard.adapters.gpustack.live_fleet import cluster_from_api, exported_documents, live_clusters
from gpustack_guard.core.deploy.lease import deployments, is_lease
from gpustack_guard.core.deploy.plan import cluster_name_of
from gpustack_guard.core.echo import untrusted
from gpustack_guard.core.errors import EXIT_OK, GsgError
from gpustack_guard.core.ownership import LEGACY, PROJECT_OWNED, UNMANAGED, Owner, owner
from gpustack_guard.core.secrets import MASK, is_secret_key, is_secret_value, mask_args
from gpustack_guard.core.spec.model import GPUSTACK_FIELD_ORDER, SERVER_MANAGED_FIELDS
from gpustack_guard.core.values import frozen_value

# Filled in by the server or deprecated: leaving them out keeps the spec to what a person decided.
STRIP = {"distributable"}


def documents_from_models(models: list[dict], cluster_names: dict[int, str]) -> list[dict]:
    """Pre-2.3 servers have no /export: build the same documents from GET /v2/models."""
    docs = []
    for model in models:
        doc = {"name": model["name"], "cluster_name": cluster_name_of(model, cluster_names)}
        for key in GPUSTACK_FIELD_ORDER:
            if key in model and key not in SERVER_MANAGED_FIELDS and key not in doc and model[key] is not None:
                doc[key] = model[key]
        docs.append(doc)
    return docs


def owner_comment(found) -> str:
    """The header line that says who owns an exported model, and how to move it into the exporting project.
    Project, spec path and managed-by come from the model's meta (the server's words): one escaped line."""
    if found.kind == PROJECT_OWNED:
        return comment(f"Owner: gsg project '{found.project}' (spec {found.spec_file}); to move it to another "
                       f"project, apply there with --take-over-from {found.project}")
    if found.kind == LEGACY:
        return comment(f"Owner: gsg, legacy marker without a project (spec {found.spec_file}); record a project "
                       "with `gsg apply --claim-legacy`")
    return comment(f"Owner: {found.describe()}; guard.adopt lets gsg take it over")


def clean(doc: dict, *, show_secrets: bool, owned: bool) -> dict:
    out = {k: v for k, v in doc.items() if k not in STRIP and v is not None}
    selector = out.get("gpu_selector")
    if isinstance(selector, dict) and selector.get("gpu_ids") and "gpus_per_replica" in selector:
        out["gpu_selector"] = {k: v for k, v in selector.items() if k != "gpus_per_replica"}  # server-filled
    if out.get("env") and not show_secrets:
        out["env"] = {k: (f"${{{k}}}" if is_secret_key(k) or is_secret_value(str(v)) else v)
                      for k, v in out["env"].items()}
    if out.get("backend_parameters") and not show_secrets:
        out["backend_parameters"] = mask_args(out["backend_parameters"])  # flags have no ${NAME}: never written
    if not owned:
        out["guard"] = {"adopt": True}
    return out


def schema_modeline(out_dir: Path) -> str:
    """The yaml-language-server comment: the repository's schema/spec.schema.json if one is above the output
    folder (relative, so it works in every checkout), else the schema's published id."""
    import os

    from gpustack_guard.core.spec.schema import SCHEMA_ID

    folder = out_dir.resolve()
    for parent in (folder, *folder.parents):
        candidate = parent / "schema" / "spec.schema.json"
        if candidate.is_file():
            return f"# yaml-language-server: $schema={os.path.relpath(candidate, folder)}\n"
        if (parent / ".git").exists():
            break
    return f"# yaml-language-server: $schema={SCHEMA_ID}\n"


# Every common file system allows 255 bytes per file name; a stem keeps room for "-" + a digest + ".yaml".
FILE_NAME_BYTES = 255
DIGEST_CHARS = 12
STEM_CHARS = FILE_NAME_BYTES - len(".yaml") - 1 - DIGEST_CHARS - 37  # 200: room to spare for a temp prefix
# Windows refuses these as a file's name before its first dot, whatever the case or extension.
RESERVED_STEMS = frozenset({"con", "prn", "aux", "nul", *(f"com{n}" for n in range(10)),
                            *(f"lpt{n}" for n in range(10))})


def filename(name: str) -> str:
    """A model name as a portable file stem: accents folded (é and e + combining accent both give e), every
    run of anything but ASCII letters, digits, '.', '_' and '-' one '-', no leading or trailing '-' or '.'
    (so never '..' or a hidden file), never a reserved Windows name, at most STEM_CHARS characters."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", folded).strip("-.")[:STEM_CHARS].rstrip("-.") or "model"
    if stem.split(".")[0].lower() in RESERVED_STEMS:
        stem = f"model-{stem}"[:STEM_CHARS]
    return stem


def file_names(names: list[str]) -> dict[str, str]:
    """Model name -> file name, collision-free on a case-insensitive file system: names whose stems differ only
    in case (Foo, foo), that fold to one stem (café, cafe, caf?) or were cut to one stem all get a digest of
    their exact name appended, so the result does not depend on the order the server lists them in. Two
    models the names of which still map to one file (the same name twice, or a name crafted to look like
    another's digest form) are refused: writing one over the other would lose a deployment."""
    stems = {name: filename(name) for name in names}
    users: dict[str, int] = {}
    for stem in stems.values():
        users[stem.casefold()] = users.get(stem.casefold(), 0) + 1
    chosen = {}
    for name, stem in stems.items():
        if users[stem.casefold()] > 1:
            stem = f"{stem}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:DIGEST_CHARS]}"
        chosen[name] = f"{stem}.yaml"
    by_file: dict[str, list[str]] = {}
    for name in names:
        by_file.setdefault(chosen[name].casefold(), []).append(name)
    clashes = [group for group in by_file.values() if len(group) > 1]
    if clashes:
        shown = "; ".join(" and ".join(f"'{untrusted(n, 80)}'" for n in group[:3]) for group in clashes[:3])
        raise GsgError(f"{sum(len(g) for g in clashes)} model(s) map to the same file name ({shown}); nothing "
                       "written (export them one cluster at a time, or rename one)")
    return chosen


@frozen_value(eq=True, repr=True)
class ExportOptions:
    connection: wiring.ConnectionOptions
    out_dir: str
    cluster: str | None = None
    show_secrets: bool = False
    force: bool = False  # replace existing spec files that differ


def run(opts: ExportOptions) -> int:
    out_dir, show_secrets, force = opts.out_dir, opts.show_secrets, opts.force
    cluster = opts.cluster or wiring.context_defaults(opts.connection)[1]
    connection = wiring.connect(opts.connection)
    client = connection.client
    clusters = dict(live_clusters(client.clusters(keep=cluster_from_api)))
    cluster_id = None
    if cluster:
        named = [cid for cid, name in clusters.items() if name == cluster]
        if not named:
            raise GsgError(f"cluster '{cluster}' not found (known: {', '.join(sorted(clusters.values()))})")
        if len(named) > 1:  # another organisation's, in a platform admin's view: which one is meant is a guess
            raise ApiError("GET", "/v2/clusters", f"{len(named)} clusters are named '{untrusted(cluster)}' (ids "
                                                  f"{', '.join(map(str, named[:10]))}): gsg cannot tell which one "
                                                  "--cluster means; nothing written")
        cluster_id = named[0]
    everything = client.models(cluster_id)
    models = deployments(everything)
    leases = {m["name"] for m in everything if is_lease(m)}
    if connection.supports_export:  # the server exports gsg's apply lease too: not a deployment to keep in git
        docs = [d for d in exported_documents(client.export_models(cluster_id=cluster_id)) if d["name"] not in leases]
        _export_matches_list(docs, models)
    else:
        docs = documents_from_models(models, clusters)
    owners = {m["name"]: owner(m) for m in models}
    target = Path(out_dir)
    if target.exists() and not target.is_dir():
        raise GsgError("--out must be a folder", where=out_dir)
    modeline = schema_modeline(target)
    names = file_names([doc["name"] for doc in docs])
    planned = []
    for doc in docs:
        found = owners.get(doc["name"], Owner(UNMANAGED))
        shown = untrusted(doc["name"], 256)
        cleaned = clean(doc, show_secrets=show_secrets, owned=found.kind != UNMANAGED)
        if cleaned.get("backend_parameters") != doc.get("backend_parameters") and "backend_parameters" in cleaned:
            err(f"gsg: {shown}: secret backend argument values written as {MASK}: move them to env "
                "(a ${NAME} reference) or export with --show-secrets")
        # Server text is data: the document through the serializer, the server's version in an escaped comment.
        origin = comment(f"Exported by gsg from {client.base_url} (GPUStack {connection.version})")
        header = modeline + origin + owner_comment(found)
        planned.append((target / names[doc["name"]], written_form(header + dump(cleaned))))
        note(f"gsg: {shown}: {untrusted(found.describe())} -> {names[doc['name']]}")
    changed = [(path, text) for path, text in planned if would_change(str(path), text)]
    replaced = [str(path) for path, _ in changed if os.path.lexists(path)]
    if replaced and not force:
        raise GsgError(f"would overwrite {len(replaced)} changed file(s) ({', '.join(replaced[:3])}); "
                       "pass --force to replace them")
    write_all_atomic([(str(path), text) for path, text in changed])
    unchanged = len(planned) - len(changed)
    note(f"gsg: exported {len(planned)} deployment(s) to {out_dir}: {len(changed)} file(s) written"
         + (f", {unchanged} unchanged" if unchanged else "")
         + ("" if show_secrets else " (secret env values written as ${NAME} references)"))
    return EXIT_OK


def _export_matches_list(docs: list[dict], models: list[dict]) -> None:
    """The server's export must hold the deployments its list holds, no fewer and no others: an empty or cut answer
    (a proxy that drops bodies) exported nothing or part of a fleet with exit 0, and one that ignores cluster_id
    wrote another cluster's models."""
    exported = [d["name"] for d in docs]
    listed = {m["name"] for m in models}
    missing = sorted(listed.difference(exported))
    extra = sorted(set(exported) - listed)
    if not missing and not extra:
        return
    where = "POST /v2/models/export"
    if missing:
        raise GsgError(f"the export holds {len(listed) - len(missing)} of the {len(listed)} deployments GET /v2/models "
                       f"lists (missing: {_some(missing)}); nothing was written, try again", where=where)
    raise GsgError(f"the export holds deployments GET /v2/models does not list ({_some(extra)}); nothing was written, "
                   "try again", where=where)


def _some(names: list[str]) -> str:
    """The first three names, and how many more."""
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return ", ".join(untrusted(n, 80) for n in names[:3]) + more
