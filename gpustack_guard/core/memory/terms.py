"""The engine's own budget, term by term, each with the rule that sized it and the source it was read from.

The names are the ones `gsg verify` reads out of a start-up log (core/verify/patterns.py takes them from here),
so an estimate and a log can be compared line by line. Bytes are per GPU, the binding rank's.
"""

from __future__ import annotations

from functools import lru_cache

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.engine_knobs import FAMILY_OF_ENGINE
from gpustack_guard.core.memory import profiles as P
from gpustack_guard.core.values import frozen_value

GPU_MEMORY = "gpu_memory_bytes"
REQUESTED = "requested_bytes_per_gpu"
WEIGHTS = "weights_bytes_per_gpu"
NON_TORCH = "non_torch_bytes_per_gpu"
FORWARD_PEAK = "forward_peak_bytes_per_gpu"
SAMPLER_PEAK = "sampler_peak_bytes_per_gpu"
ENCODER_PEAK = "encoder_peak_bytes_per_gpu"
ACTIVATION = "activation_bytes_per_gpu"
CUDA_GRAPHS = "cuda_graphs_bytes_per_gpu"
KV_CACHE = "kv_cache_bytes_per_gpu"
COMPUTE_BUFFER = "compute_buffer_bytes_per_gpu"
RECURRENT_STATE = "recurrent_state_bytes_per_gpu"  # llama.cpp's RS buffer: per-sequence rows of recurrent layers
MAMBA_STATE = "mamba_state_bytes_per_gpu"  # SGLang's mamba pool of a Gated DeltaNet hybrid: slots of linear states
# the LoRA adapter slots under --enable-lora (core/memory/lora.py): inside vLLM's weights term ("Model loading
# took" counts them), between the weights and the KV pool in SGLang's
LORA_BUFFERS = "lora_buffers_bytes_per_gpu"
KV_TOKENS = "kv_capacity_tokens"
SAMPLER_WARMUP = "sampler_warmup_bytes_per_gpu"

# The terms of each engine's budget, in the order it spends its memory
ENGINE_TERMS = {
    "vLLM": (WEIGHTS, LORA_BUFFERS, NON_TORCH, FORWARD_PEAK, SAMPLER_PEAK, ENCODER_PEAK, ACTIVATION, CUDA_GRAPHS,
             KV_CACHE, KV_TOKENS, SAMPLER_WARMUP),
    "SGLang": (WEIGHTS, LORA_BUFFERS, NON_TORCH, ACTIVATION, CUDA_GRAPHS, MAMBA_STATE, KV_CACHE, KV_TOKENS),
    "llama.cpp": (WEIGHTS, NON_TORCH, KV_CACHE, RECURRENT_STATE, COMPUTE_BUFFER, KV_TOKENS),
}
FAMILY = FAMILY_OF_ENGINE  # the engine name an estimate carries -> its family


@frozen_value  # identity equality: cheaper to define, never compared or hashed
class BudgetTerm:
    """One row of an estimate's budget: the term, its value and unit, the rule that gave it and its source."""

    __repr__ = fields_repr

    term: str
    value: int
    unit: str  # "bytes" | "tokens"
    rule: str
    source: str

    def as_json(self) -> dict:
        return {"term": self.term, "value": self.value, "unit": self.unit, "rule": self.rule,
                "source": self.source}


def _values(engine: str, est) -> dict[str, int]:
    """Each term's figure from the estimate (the vLLM phases are kept in its extra)."""
    x = est.extra
    common = {WEIGHTS: est.weights, NON_TORCH: est.non_torch, ACTIVATION: est.activation,
              CUDA_GRAPHS: est.cuda_graphs, KV_CACHE: est.kv_cache, KV_TOKENS: est.kv_capacity_tokens}
    if engine == "vLLM":
        common.update({FORWARD_PEAK: x.get("forward_peak", 0), SAMPLER_PEAK: x.get("sampler_peak", 0),
                       ENCODER_PEAK: x.get("encoder_peak", 0), SAMPLER_WARMUP: x.get("sampler_warmup_bytes", 0)})
    if engine == "llama.cpp":
        common[COMPUTE_BUFFER] = max(est.compute_buffer_per_gpu, default=est.activation)
        common[RECURRENT_STATE] = int((x.get("recurrent_state") or {}).get("bytes_per_gpu", 0))
    if engine == "SGLang":
        common[MAMBA_STATE] = int((x.get("mamba_pool") or {}).get("bytes", 0))
    if engine in ("vLLM", "SGLang"):
        common[LORA_BUFFERS] = int((x.get("lora") or {}).get("bytes", 0))
    return common


def budget_terms(est) -> list[BudgetTerm]:
    """The estimate's budget as rows of (term, figure, rule, source file@tag) for the release it was made for."""
    order = ENGINE_TERMS.get(est.engine)
    if order is None:
        return []
    values = _values(est.engine, est)
    # a vLLM estimate names the engine generation it ran (a V0 fallback, a V1 opt-in): its rows are that code's
    generation = str(est.extra.get("engine_generation") or "") if est.engine == "vLLM" else ""
    # the recurrent-state row only where the model has recurrent layers (attention-only budgets stay as they were)
    hidden = (*(() if est.extra.get("recurrent_state") else (RECURRENT_STATE,)),
              *(() if est.extra.get("mamba_pool") else (MAMBA_STATE,)),
              *(() if est.extra.get("lora") else (LORA_BUFFERS,)))
    rows = [BudgetTerm(term, int(values[term]), "tokens" if term == KV_TOKENS else "bytes", rule, source)
            for term, rule, source in _term_sources(est.engine, est.version, generation) if term not in hidden]
    # a multimodal model's encoder term names the rule that sized it for this model and release
    encoder = est.extra.get("encoder_profile") if est.engine == "vLLM" else None
    if isinstance(encoder, dict) and encoder.get("rule") not in (None, "none"):
        rows = [BudgetTerm(r.term, r.value, r.unit, str(encoder["rule"]), f"{r.source}; {encoder['source']}")
                if r.term == ENCODER_PEAK else r for r in rows]
    # a rule the deployment's own env picked over the release's default (VLLM_USE_FLASHINFER_SAMPLER)
    moved = est.extra.get("term_rules") or {}
    rows = [BudgetTerm(r.term, r.value, r.unit, *moved[r.term]) if r.term in moved else r for r in rows]
    # vLLM's --performance-mode: the terms whose batch or capture sizes it moved name it beside their own rule
    mode = est.extra.get("performance_mode") if est.engine == "vLLM" else None
    if isinstance(mode, dict) and mode.get("terms"):
        rows = [BudgetTerm(r.term, r.value, r.unit, f"{r.rule}+performance-mode-{mode['mode']}",
                           f"{r.source}; {mode['source']}") if r.term in mode["terms"] else r for r in rows]
    # the target's own MTP layers drafting (profiles.VLLM_MTP_DRAFT): the weights and the KV pool include them
    draft = est.extra.get("speculative_draft") if est.engine == "vLLM" else None
    if isinstance(draft, dict) and draft.get("kind") == "mtp-layers":
        rows = [BudgetTerm(r.term, r.value, r.unit, f"{r.rule}+mtp-draft-layers", f"{r.source}; {draft['source']}")
                if r.term in (WEIGHTS, KV_CACHE, KV_TOKENS) else r for r in rows]
    # block-FP8 weights vLLM runs through Marlin: the weights include its scales (profiles.VLLM_FP8_MARLIN)
    marlin = est.extra.get("fp8_marlin_scales") if est.engine == "vLLM" else None
    if isinstance(marlin, dict) and marlin.get("bytes"):
        rows = [BudgetTerm(r.term, r.value, r.unit, f"{r.rule}+fp8-marlin-scales", f"{r.source}; {marlin['source']}")
                if r.term == WEIGHTS else r for r in rows]
    return rows


@lru_cache(maxsize=256)
def _term_sources(engine: str, version_text: str, generation: str = "") -> tuple[tuple[str, str, str], ...]:
    """(term, rule, source) of each term of the engine's budget for a release (and vLLM engine generation).
    Memoised: a pure function of these texts, and every finding of a memory rule asks (10,000 specs: 2,250 GSG033
    findings, a few releases), where each lookup compared a dozen versions per term (issue 34)."""
    family = FAMILY[engine]
    version = P.arithmetic_release(family, version_text.removesuffix(" (assumed)"))
    if family == "vllm" and generation:
        version = P.vllm_generation_release(version, generation)
    rows = ((term, P.term_source(family, term, version)) for term in ENGINE_TERMS[engine])
    return tuple((term, row.rule, row.source) for term, row in rows)
