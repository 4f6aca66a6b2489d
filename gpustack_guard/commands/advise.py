"""gsg advise: workloads -> backend flags, one pool or two, every candidate judged by `gsg validate`'s pipeline."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

from gpustack_guard import wiring
from gpustack_guard.adapters.files.output import out, would_change, write_all_atomic, written_form
from gpustack_guard.core.advise.candidates import BACKEND_NAME, FAMILY, Target, hypothetical_fleet
from gpustack_guard.core.advise.compare import DOES_NOT_FIT, Advice, advise
from gpustack_guard.core.advise.workload import NAME_PATTERN
from gpustack_guard.core.errors import EXIT_FAIL, EXIT_OK, GsgError
from gpustack_guard.core.fleet.model import MAX_GPUS_PER_WORKER, Fleet, gpu_index
from gpustack_guard.core.memory.profiles import DEFAULT_VERSIONS
from gpustack_guard.core.units import MAX_DEVICE_BYTES, TiB, parse_size
from gpustack_guard.core.values import frozen_value
from gpustack_guard.reporters import AdviceFormat


@frozen_value(eq=True, repr=True)
class AdviseOptions:
    model: str  # repo id or catalog name; llama.cpp: REPO:FILE.gguf
    workloads: tuple[str, ...]  # workload files
    fleet: str | None = None
    gpus: str | None = None  # --fleet: GPU ids, comma-separated; --gpu-memory: a count
    gpu_memory: str | None = None
    backend: str = "vLLM"
    backend_version: str | None = None
    output: AdviceFormat = AdviceFormat.TEXT
    emit_specs: str | None = None
    name: str | None = None  # base deployment name; default from the model
    offline: bool = False
    observed: str | None = None  # a verify report or recorded vector: the engine's own KV pool
    force: bool = False  # --emit-specs replaces existing spec files that differ


def deployment_base_name(model: str) -> str:
    """`meta-llama/Llama-3.3-70B-Instruct` -> `llama-3.3-70b-instruct` (a valid, readable model name)."""
    tail = model.split(":")[0].rstrip("/").split("/")[-1].lower()
    tail = re.sub(r"[^a-z0-9.-]+", "-", tail).strip("-.")
    return (tail or "model")[:40].rstrip("-.")


def _gpus(opts: AdviseOptions, target_args: dict) -> tuple[Target, Fleet]:
    if opts.fleet and opts.gpu_memory:
        raise GsgError("give either --fleet FILE --gpus ID,... or --gpu-memory SIZE --gpus N, not both")
    if not opts.gpus:
        raise GsgError("--gpus is required: GPU ids with --fleet, a count with --gpu-memory")
    if opts.fleet:
        from gpustack_guard.adapters.files.fleet_file import load_fleet

        fleet = load_fleet(opts.fleet)
        ids = tuple(i.strip() for i in opts.gpus.split(",") if i.strip())
        for cluster in fleet.clusters:
            index = gpu_index(cluster)
            if all(i in index for i in ids):
                refs = [index[i] for i in ids]
                smallest = min(refs, key=lambda r: r.total)
                cluster_name = cluster.name if len(fleet.clusters) > 1 else None
                return Target(gpu_ids=ids, gpu_memory=smallest.total, gpu_name=smallest.gpu.name,
                              cluster=cluster_name, **target_args), fleet
        known = sorted({i for c in fleet.clusters for i in gpu_index(c)})
        missing = [i for i in ids if i not in known]
        raise GsgError(f"GPU {', '.join(missing) or ', '.join(ids)} not in one cluster of the fleet (known: "
                       f"{', '.join(known[:8])}{'…' if len(known) > 8 else ''})", where="--gpus")
    if not opts.gpu_memory:
        raise GsgError("no GPUs: pass --fleet FILE --gpus ID,... or --gpu-memory SIZE --gpus N")
    try:
        total, count = parse_size(opts.gpu_memory), int(opts.gpus)
    except ValueError:
        raise GsgError("--gpu-memory takes a size (48GiB) and --gpus a count (4)", where="--gpu-memory/--gpus") \
            from None
    if not 0 < total <= MAX_DEVICE_BYTES or not 1 <= count <= MAX_GPUS_PER_WORKER:
        raise GsgError(f"must be a size above 0 and at most {MAX_DEVICE_BYTES // TiB} TiB, and 1 to "
                       f"{MAX_GPUS_PER_WORKER} GPUs", where="--gpu-memory/--gpus")
    draft = Target(gpu_ids=(), gpu_memory=total, **target_args)
    fleet, ids = hypothetical_fleet(draft, count)
    return Target(gpu_ids=ids, gpu_memory=total, cluster=None, **target_args), fleet


def build_target(opts: AdviseOptions) -> tuple[Target, Fleet]:
    family = FAMILY.get(opts.backend.lower())
    if family is None:
        raise GsgError(f"--backend must be vLLM, SGLang or llama.cpp, not '{opts.backend}'")
    repo, _, gguf = opts.model.partition(":")
    if family == "llamacpp" and not gguf.lower().endswith(".gguf"):
        raise GsgError("llama.cpp needs a GGUF file: --model REPO:FILE.gguf", where="--model")
    catalog = _catalog_name(repo) or _catalog_name(re.sub(r"(?i)-gguf$", "", repo))
    version = opts.backend_version or DEFAULT_VERSIONS[family]
    return _gpus(opts, {"model": repo, "family": family, "backend_version": version, "gguf_file": gguf or None,
                        "facts_catalog": catalog})


def _catalog_name(model: str) -> str | None:
    """The catalog's published name for a model (a GGUF repository named after its base model counts), so
    candidate specs carry guard.model.catalog and need no hub lookup."""
    from gpustack_guard.adapters.model_sources.catalog import catalog_configs, catalog_key

    hit = catalog_configs().get(catalog_key(model))
    return hit[0] if hit else None


def make_evaluate(fleet: Fleet, offline: bool):
    """The validate pipeline, as `gsg validate` builds it, over in-memory documents."""
    from gpustack_guard.core.pipeline import validate

    renderer = wiring.build_renderer([], [])
    resolve = wiring.build_resolver(offline).resolve

    def evaluate(docs, hypothetical):
        return validate(docs, [], renderer, resolve, hypothetical or fleet, os.environ)

    return evaluate


def observed_pool(path: str, target: Target):
    """The observation of --observed, refused in one line when it is of another engine or model."""
    from gpustack_guard.adapters.files.vectors import load_observed_pool
    from gpustack_guard.core.advise.observed import same_model

    pool = load_observed_pool(path)
    if pool.family != target.family:
        raise GsgError(f"records a {BACKEND_NAME[pool.family]} run; this advice is for {target.backend}", where=path)
    if not same_model(pool, target.model):
        raise GsgError(f"records model {pool.model}, not {target.model}", where=path)
    return pool


def emit_specs(advice: Advice, directory: str, force: bool = False) -> tuple[list[str], int]:
    """Write the advised specs (all or none): the paths written and how many were already current. A spec of the
    same name that differs (the operator's own, or an earlier advice edited since) is replaced only with --force,
    as `gsg export` does: an advice run silently overwrote a hand-tuned spec of the same model."""
    from gpustack_guard.adapters.files.yaml_dump import comment, dump

    if advice.chosen is None:
        raise GsgError("nothing to emit: the target does not fit (see the advice above)", where=directory)
    planned = []
    for sizing in advice.chosen.deployments:
        header = ("# yaml-language-server: $schema=https://gpustack-guard.dev/schema/spec-v1.json\n"
                  + comment(f"Written by `gsg advise` for workload(s) {', '.join(w.name for w in sizing.workloads)} "
                            f"({advice.decision}); `gsg validate` passes it unchanged."))
        text = written_form(header + dump(sizing.chosen.document, width=120, allow_unicode=False))
        planned.append((str(Path(directory) / f"{sizing.name}.yaml"), text))
    changed = [(path, text) for path, text in planned if would_change(path, text)]
    replaced = [path for path, _ in changed if os.path.lexists(path)]
    if replaced and not force:
        raise GsgError(f"would overwrite {len(replaced)} changed file(s) ({', '.join(replaced[:3])}); pass --force "
                       "to replace them; nothing written", where="--emit-specs")
    write_all_atomic(changed)
    return [path for path, _ in changed], len(planned) - len(changed)


def run(opts: AdviseOptions) -> int:
    from gpustack_guard.adapters.files.output import err
    from gpustack_guard.adapters.files.workload_file import load_workloads
    from gpustack_guard.reporters import advice as report

    if not opts.workloads:
        raise GsgError("at least one --workload FILE is needed")
    if opts.name is not None and (len(opts.name) > 40 or not re.fullmatch(NAME_PATTERN, opts.name)):
        raise GsgError("a deployment name of up to 40 letters, digits, '.', '_', '-'", where="--name")
    workloads = load_workloads(list(opts.workloads))
    target, fleet = build_target(opts)
    if opts.observed:
        target = replace(target, observed=observed_pool(opts.observed, target))
    advice = advise(target, make_evaluate(fleet, opts.offline), workloads,
                    opts.name or deployment_base_name(target.model))
    if opts.output is AdviceFormat.HTML:
        from gpustack_guard.reporters.memory_html import render_advice

        out(render_advice(advice))
    else:
        out({"text": report.render_text, "json": report.render_json,
             "markdown": report.render_markdown}[opts.output.value](advice))
    if opts.emit_specs:
        written, current = emit_specs(advice, opts.emit_specs, opts.force)
        for path in written:
            err(f"gsg: wrote {path}")
        if current:
            err(f"gsg: {current} spec file(s) in {opts.emit_specs} already current")
    return EXIT_FAIL if advice.decision == DOES_NOT_FIT else EXIT_OK
