"""gsg export: adopt live deployments as spec files (one per model)."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml

from gpustack_guard import wiring
from gpustack_guard.adapters.files.output import err, note, write_atomic
from gpustack_guard.adapters.gpustack.live_fleet import cluster_from_api, exported_documents
from gpustack_guard.core.deploy.plan import cluster_name_of
from gpustack_guard.core.echo import yaml_comment
from gpustack_guard.core.errors import EXIT_OK, GsgError
from gpustack_guard.core.ownership import LEGACY, PROJECT_OWNED, UNMANAGED, Owner, owner
from gpustack_guard.core.secrets import MASK, is_secret_key, is_secret_value, mask_args
from gpustack_guard.core.spec.model import GPUSTACK_FIELD_ORDER, SERVER_MANAGED_FIELDS

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
    """The header line that says who owns an exported model, and how to move it into the exporting project."""
    if found.kind == PROJECT_OWNED:
        return yaml_comment(f"Owner: gsg project '{found.project}' (spec {found.spec_file}); to move it to another "
                            f"project, apply there with --take-over-from {found.project}")
    if found.kind == LEGACY:
        return yaml_comment(f"Owner: gsg, legacy marker without a project (spec {found.spec_file}); record a "
                            "project with `gsg apply --claim-legacy`")
    return yaml_comment(f"Owner: {found.describe()}; guard.adopt lets gsg take it over")


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


STEM_CHARS = 120  # well inside any file system's 255-byte name limit, with room for the suffix below


def filename(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:STEM_CHARS].strip("-.") or "model"


def file_names(names: list[str]) -> dict[str, str]:
    """A file stem per model name, never shared: names that sanitise to one stem, also only by letter case (a
    case-insensitive file system holds Foo.yaml and foo.yaml as one file), each get a suffix from their exact
    name, so every model is its own file and the same name gets the same file on every export."""
    stems = {name: filename(name) for name in names}
    taken: dict[str, int] = {}
    for stem in stems.values():
        taken[stem.lower()] = taken.get(stem.lower(), 0) + 1
    return {name: stem if taken[stem.lower()] == 1 else
            f"{stem}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:10]}"
            for name, stem in stems.items()}


@dataclass(frozen=True)
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
    names = dict(client.clusters(keep=cluster_from_api))
    cluster_id = None
    if cluster:
        cluster_id = next((cid for cid, name in names.items() if name == cluster), None)
        if cluster_id is None:
            raise GsgError(f"cluster '{cluster}' not found (known: {', '.join(sorted(names.values()))})")
    models = client.models(cluster_id)
    if connection.supports_export:
        docs = exported_documents(client.export_models(cluster_id=cluster_id))
    else:
        docs = documents_from_models(models, names)
    owners = {m["name"]: owner(m) for m in models}
    target = Path(out_dir)
    modeline = schema_modeline(target)
    planned = []
    model_names = [doc["name"] for doc in docs]
    twice = sorted(n for n, count in Counter(model_names).items() if count > 1)
    if twice:
        raise GsgError(f"the server lists models of one name more than once ({', '.join(map(repr, twice[:3]))}): "
                       "export would write one over the other; nothing written")
    stems = file_names(model_names)
    for doc in docs:
        found = owners.get(doc["name"], Owner(UNMANAGED))
        cleaned = clean(doc, show_secrets=show_secrets, owned=found.kind != UNMANAGED)
        if cleaned.get("backend_parameters") != doc.get("backend_parameters") and "backend_parameters" in cleaned:
            err(f"gsg: {doc['name']}: secret backend argument values written as {MASK}: move them to env "
                "(a ${NAME} reference) or export with --show-secrets")
        text = yaml.safe_dump(cleaned, sort_keys=False, allow_unicode=True)
        path = target / f"{stems[doc['name']]}.yaml"
        origin = yaml_comment(f"Exported by gsg from {client.base_url} (GPUStack {connection.version})")
        header = modeline + origin + owner_comment(found)
        planned.append((path, header + text))
        note(f"gsg: {doc['name']}: {found.describe()}")
    clashes = [str(p) for p, text in planned if p.exists() and p.read_text() != text]
    if clashes and not force:
        raise GsgError(f"would overwrite {len(clashes)} changed file(s) ({', '.join(clashes[:3])}); "
                       "pass --force to replace them")
    written = set()
    for path, text in planned:
        write_atomic(str(path), text)
        written.add(path)
    note(f"gsg: exported {len(written)} deployment(s) to {out_dir}"
        + ("" if show_secrets else " (secret env values written as ${NAME} references)"))
    return EXIT_OK
