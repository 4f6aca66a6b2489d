"""Candidate spec documents, built in memory, and the verdict the validate pipeline gives each.

No arithmetic lives here: a candidate is a GPUStack deployment document with a guard block, and what it holds
(KV capacity, headroom, sequences at once) is read from the Estimate the pipeline's memory rules computed.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any

from gpustack_guard.core import findings as F
from gpustack_guard.core.advise.workload import Workload
from gpustack_guard.core.fleet.model import Fleet
from gpustack_guard.core.memory.estimate import FITS, Estimate
from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.ports import EvaluateSpecs
from gpustack_guard.core.spec.check import SpecDoc
from gpustack_guard.core.values import frozen_value
from gpustack_guard.core.verdict import deployment_verdict

if TYPE_CHECKING:
    from gpustack_guard.core.advise.observed import ObservedPool

FAMILY = {"vllm": "vllm", "sglang": "sglang", "llama.cpp": "llamacpp", "llamacpp": "llamacpp"}
BACKEND_NAME = {"vllm": "vLLM", "sglang": "SGLang", "llamacpp": "llama.cpp"}
HYPOTHETICAL_WORKER = "hypothetical"

Evaluate = EvaluateSpecs  # what the command passes in: the validate pipeline (core/ports.py)


class InMemoryDocument:
    """A candidate document that never was a file: every path is at line 1 (LocatedData for the pipeline)."""

    def __init__(self, data: dict):
        self.data = data
        self.start_line = 1
        self.duplicate_keys: list = []

    def position(self, path: tuple, *, key: bool = False) -> tuple[int, int]:
        return 1, 1


@frozen_value(eq=True, repr=True)
class Target:
    """What is being advised: the model as the spec names it, the backend and the GPUs one deployment may use."""

    model: str  # huggingface_repo_id of the deployed model
    family: str  # vllm | sglang | llamacpp
    backend_version: str | None
    gpu_ids: tuple[str, ...]
    gpu_memory: int  # bytes of the smallest chosen GPU (hypothetical fleets are made of this size)
    gpu_name: str = ""
    cluster: str | None = None
    gguf_file: str | None = None  # huggingface_filename for llama.cpp
    facts_catalog: str | None = None  # guard.model.catalog: facts from gsg's catalog instead of the hub
    observed: ObservedPool | None = None  # --observed: the engine's own KV pool for one configuration

    @property
    def backend(self) -> str:
        return BACKEND_NAME[self.family]


@frozen_value(eq=True, repr=True)
class Judged:
    """One candidate as `gsg validate` sees it."""

    document: dict
    estimate: Estimate | None
    findings: tuple[F.Finding, ...] = field(default=())
    facts: ModelFacts | None = None  # the model as the pipeline resolved it (compute per token, for latency)
    observed_scale: float | None = None  # the pool scaled by --observed (observed.py), and the pool before it
    estimated_kv_tokens: int | None = None

    @property
    def errors(self) -> tuple[F.Finding, ...]:
        return tuple(f for f in self.findings if f.severity == F.Severity.ERROR)

    @property
    def warnings(self) -> tuple[F.Finding, ...]:
        return tuple(f for f in self.findings if f.severity == F.Severity.WARNING)

    def has(self, rule: F.Rule) -> bool:
        return any(f.rule.id == rule.id for f in self.findings)

    @property
    def verdict(self) -> str:
        """What `gsg estimate` prints for this deployment (one function for both, core/verdict.py)."""
        return deployment_verdict(self.findings, self.estimate)[0]

    @property
    def clean(self) -> bool:
        """`fits` as estimate says it, and `gsg validate --fail-level warning` passes: no warning of any rule."""
        return self.verdict == FITS and not any(f.severity.rank >= F.Severity.WARNING.rank for f in self.findings)

    @property
    def numbers(self) -> Estimate:
        """The estimate of a candidate known to have one (callers check `clean` or `estimate` first)."""
        if self.estimate is None:
            raise ValueError(f"candidate {self.document['name']} has no estimate")
        return self.estimate

    @property
    def parameters(self) -> list[str]:
        return list(self.document.get("backend_parameters") or [])


def union_guard_workload(workloads: tuple[Workload, ...]) -> dict:
    """guard.workload of a deployment serving these workloads: the longest request, the summed peak, and for a
    shared pool the mix, so validate's GSG033 prices what advise sized (core/memory/demand.py)."""
    guard: dict[str, Any] = {"prompt_tokens_p99": max(w.prompt_tokens.p99 for w in workloads),
                             "max_output_tokens": max(w.output_tokens.p99 for w in workloads),
                             "concurrency": sum(w.concurrency for w in workloads)}
    if len(workloads) > 1:
        guard["mix"] = [{"name": w.name, "prompt_tokens_p99": w.prompt_tokens.p99,
                         "max_output_tokens": w.output_tokens.p99, "concurrency": w.concurrency} for w in workloads]
    return guard


def document(target: Target, name: str, gpu_ids: tuple[str, ...], parameters: list[str],
             workloads: tuple[Workload, ...], replicas: int = 1) -> dict:
    """A spec document `gsg validate` accepts as written (and `--emit-specs` writes unchanged)."""
    doc: dict[str, Any] = {"name": name}
    if target.cluster:
        doc["cluster_name"] = target.cluster
    doc.update({"source": "huggingface", "huggingface_repo_id": target.model})
    if target.gguf_file:
        doc["huggingface_filename"] = target.gguf_file
    selector: dict[str, Any] = {"gpu_ids": list(gpu_ids)}
    if replicas > 1:  # each replica takes its own equal share of the listed GPUs
        selector["gpus_per_replica"] = len(gpu_ids) // replicas
    doc.update({"replicas": replicas, "categories": ["llm"], "gpu_selector": selector, "backend": target.backend})
    if target.backend_version:
        doc["backend_version"] = target.backend_version
    doc["backend_parameters"] = list(parameters)
    guard: dict[str, Any] = {"workload": union_guard_workload(workloads)}
    if target.facts_catalog:
        guard["model"] = {"catalog": target.facts_catalog}
    doc["guard"] = guard
    return doc


def judge(evaluate: Evaluate, documents: list[dict], fleet: Fleet | None = None) -> list[Judged]:
    """Run the validate pipeline on documents that are evaluated together (their bookings add up)."""
    docs = [SpecDoc(f"(advise) {d['name']}", i, InMemoryDocument(d)) for i, d in enumerate(documents)]
    report = evaluate(docs, fleet)
    by_name = {ev.rendered.name: ev for ev in report.evaluations}
    judged = []
    for i, d in enumerate(documents):
        ev = by_name.get(d["name"])
        findings = tuple(f for f in report.findings if f.spec == d["name"]
                         or (f.spec is None and f.location.file == docs[i].file))
        judged.append(Judged(d, ev.estimate if ev else None, findings, ev.rendered.facts if ev else None))
    return judged


def hypothetical_fleet(target: Target, gpus: int) -> tuple[Fleet, tuple[str, ...]]:
    """One worker of `gpus` GPUs like the smallest chosen one: to say how many GPUs would make a target fit."""
    cluster = target.cluster or "hypothetical"
    fleet = Fleet.validate({"clusters": [{"name": cluster, "workers": [{
        "name": HYPOTHETICAL_WORKER,
        "gpus": [{"index": i, "name": target.gpu_name, "memory": {"total": target.gpu_memory}}
                 for i in range(gpus)]}]}]})
    return fleet, tuple(f"{HYPOTHETICAL_WORKER}:cuda:{i}" for i in range(gpus))
