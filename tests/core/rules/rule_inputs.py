"""Inputs for table tests straight on the pure core: spec documents as Python dicts, a fleet as a record, model
facts from a config dict; no YAML, no files, no CLI. `run_stages` runs check -> render -> place -> estimate."""

from __future__ import annotations

from dataclasses import dataclass

from gpustack_guard.core.fleet.model import Fleet
from gpustack_guard.core.memory.hfconfig import facts_from_config
from gpustack_guard.core.pipeline import evaluate, render_all
from gpustack_guard.core.ports import TemplateError, TemplateOutput
from gpustack_guard.core.spec.check import SpecDoc
from gpustack_guard.core.units import MiB

# the published configs (as in the bundled catalog)
LLAMA_8B = facts_from_config({
    "model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 14336,
    "vocab_size": 128256, "tie_word_embeddings": False, "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16"}, "test:llama-8b")
QWEN_7B = facts_from_config({
    "model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "hidden_size": 3584, "num_hidden_layers": 28,
    "num_attention_heads": 28, "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064,
    "tie_word_embeddings": False, "max_position_embeddings": 32768, "torch_dtype": "bfloat16",
    "attention_bias": True}, "test:qwen-7b")
QWEN_05B = facts_from_config({
    "model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "hidden_size": 896, "num_hidden_layers": 24,
    "num_attention_heads": 14, "num_key_value_heads": 2, "intermediate_size": 4864, "vocab_size": 151936,
    "tie_word_embeddings": True, "max_position_embeddings": 32768, "torch_dtype": "bfloat16"}, "test:qwen-0.5b")
LLAMA_70B = facts_from_config({
    "model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 8192, "num_hidden_layers": 80,
    "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 28672,
    "vocab_size": 128256, "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}, "test:llama-70b")

A6000 = 49140 * MiB
RTX4090 = 24564 * MiB


def gpu(index: int, total: int = A6000, **memory) -> dict:
    return {"index": index, "name": "NVIDIA RTX A6000" if total == A6000 else "NVIDIA GeForce RTX 4090",
            "memory": {"total": total, **memory}}


def worker(name: str, *gpus: dict, labels: dict | None = None, state: str = "ready") -> dict:
    return {"name": name, "labels": labels or {}, "state": state, "gpus": list(gpus)}


def fleet(*workers: dict, instances: tuple = (), name: str = "prod", more_clusters: tuple = ()) -> Fleet:
    clusters = [{"name": name, "workers": list(workers), "instances": list(instances)}]
    return Fleet.validate({"clusters": clusters + [{"name": n, "workers": []} for n in more_clusters]})


def vllm(name: str, *args: str, gpu_ids: list[str] | None = None, **fields) -> dict:
    """A vLLM deployment document with pinned version (so GSG039 stays out of the way)."""
    doc = {"name": name, "source": "huggingface", "huggingface_repo_id": "org/model"}
    if gpu_ids is not None:
        doc["gpu_selector"] = {"gpu_ids": gpu_ids}
    doc |= {"backend": "vLLM", "backend_version": "0.11.0", "backend_parameters": list(args)}
    return doc | fields


class Located:
    """LocatedData without YAML: top-level key k sits on line (its position + 1) of its document, nested paths
    on their key's line at column 3; a document's lines start after the previous documents'."""

    def __init__(self, data, start_line: int = 1, duplicate_keys=()):
        self.data, self.start_line, self.duplicate_keys = data, start_line, list(duplicate_keys)

    def position(self, path, *, key: bool = False):
        keys = list(self.data) if isinstance(self.data, dict) else []
        if not path or path[0] not in keys:
            return self.start_line, 1
        return self.start_line + keys.index(path[0]), 1 if len(path) == 1 else 3


class Templates:
    def __init__(self, templates: dict[str, TemplateOutput] | None = None):
        self.templates = templates or {}

    def render(self, name, context):
        if name not in self.templates:
            raise TemplateError(f"template '{name}' not found", "spec.yaml")
        output = self.templates[name]
        if isinstance(output, TemplateError):
            raise output
        return output


@dataclass
class Run:
    results: object  # core.stages.results.Results
    stage_findings: list  # what the check and render stages emitted

    def findings(self, rule) -> list:
        """The rule's own findings: its check on the results plus what the stages emitted under its id."""
        own = list(rule.check(self.results)) if rule.check is not None else []
        return own + [f for f in self.stage_findings if f.rule is rule]

    def messages(self, rule) -> list[str]:
        return [f.message for f in self.findings(rule)]


def documents(*docs: dict, file: str = "spec.yaml", duplicate_keys=None) -> list[SpecDoc]:
    out, line = [], 1
    for i, data in enumerate(docs):
        dup = (duplicate_keys or {}).get(i, ())
        out.append(SpecDoc(file, i, Located(data, line, dup)))
        line += (len(data) if isinstance(data, dict) else 1) + 1
    return out


def run_stages(*docs: dict, fleet: Fleet | None, facts=LLAMA_8B, templates=None, duplicate_keys=None) -> Run:
    """The pure pipeline up to the rules; facts=None: the model is unknown."""
    if facts is None:
        def resolve(spec, file):
            return None, "no catalog entry, config or guard.model for 'org/model'"
    else:
        def resolve(spec, file):
            return facts, None
    rendered, found = render_all(documents(*docs, duplicate_keys=duplicate_keys), Templates(templates), resolve, {})
    return Run(evaluate(rendered, fleet), found)


# one two-A6000 worker and one 4090 worker, one cluster
FLEET_1 = fleet(worker("w1", gpu(0), gpu(1)), worker("w2", gpu(0, RTX4090)))
# a clean vLLM deployment on w1:cuda:0: every rule stays silent
OK = vllm("a", "--max-model-len=8192", "--max-num-seqs=16", gpu_ids=["w1:cuda:0"])
