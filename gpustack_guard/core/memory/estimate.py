"""The result every engine returns: a per-GPU breakdown of the worst rank and a verdict."""

from __future__ import annotations

import enum
from dataclasses import field

from gpustack_guard.core.dataclass_repr import fields_repr
from gpustack_guard.core.memory.terms import budget_terms
from gpustack_guard.core.records import copy_plan, copy_planned
from gpustack_guard.core.values import frozen_value

FITS = "fits"
KV_BELOW_MAX_LEN = "kv-below-max-model-len"
NO_KV_MEMORY = "no-kv-memory"
DOES_NOT_FIT = "does-not-fit"
SAMPLER_WARMUP_OOM = "sampler-warmup-oom"  # starts its budget, dies warming the sampler up after the KV cache
# a hybrid's KV pool holds fewer state blocks than max_num_seqs under FULL decode graphs (core/memory/state_blocks.py)
STATE_BLOCKS_BELOW_SEQS = "mamba-blocks-below-max-num-seqs"


class NoEstimate(enum.Enum):
    """Why the estimation stage produced no (or only a partial) estimate; rules pick their id from this."""

    NO_FACTS = "no-facts"  # neither catalog, config nor guard.model describes the architecture
    WEIGHTS_UNKNOWN = "weights-unknown"  # the architecture is known but the weight bytes are not
    UNSUPPORTED_MODEL = "unsupported-model"  # the engine has no memory model for the architecture
    BAD_ARGUMENTS = "bad-arguments"  # the engine could not read a backend argument's value


class LayoutUnsupported(ValueError):
    """A deployment whose KV layout gsg has not read for this release or flag (the engine turns it into
    UnsupportedModel)."""


class GatedDeltaUnsupported(LayoutUnsupported):
    """A deployment of a Gated DeltaNet model whose state layout gsg has not read (a release, a flag):
    core/memory/gated_delta.py raises it, the engine turns it into UnsupportedModel."""


class UnsupportedModel(ValueError):
    """The engine has no memory model for this architecture (a model limit, not a bad argument)."""


@frozen_value  # identity equality: cheaper to define, never compared
class Estimate:
    """The per-GPU memory picture of one replica on its chosen GPUs, and the engine's verdict."""

    __repr__ = fields_repr

    engine: str
    version: str
    gpu_total: int  # bytes of the smallest chosen GPU (the worst rank)
    gpus: int  # GPUs per replica
    requested: int  # what the engine claims for itself (gmu x total; SGLang f x total; llama.cpp its sum)
    weights: int  # per GPU, worst rank
    activation: int
    non_torch: int
    cuda_graphs: int
    kv_cache: int  # KV pool per GPU (0 when negative)
    kv_available: int  # may be negative: the shortfall
    headroom: int  # total - requested
    headroom_needed: int  # CUDA context, comm buffers, graphs paid after KV allocation, sampler, slack
    footprint: int  # real bytes the deployment occupies on each GPU
    kv_bytes_per_token: int  # per GPU
    block_size: int
    kv_capacity_tokens: int
    max_model_len: int
    estimated_max_model_len: int
    max_num_seqs: int
    max_concurrency: float
    verdict: str
    kv_needed: int = 0  # KV bytes one request of max_model_len needs (llama.cpp: 0, its KV is in requested)
    notes: tuple[str, ...] = field(default=())
    compute_buffer_per_gpu: tuple[int, ...] = ()  # llama.cpp: each device's one compute buffer
    dtype: str = ""  # vLLM/SGLang: what the weights are loaded in (--dtype; `auto` downcasts float32)
    kv_cache_dtype: str = ""  # what the KV cache is stored in (`auto`: the loaded dtype)
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    def breakdown(self) -> dict[str, int]:
        return {"requested": self.requested, "weights": self.weights, "activation": self.activation,
                "non_torch": self.non_torch, "cuda_graphs": self.cuda_graphs, "kv_cache": self.kv_cache,
                "headroom": self.headroom}

    def as_json(self) -> dict:
        """The estimate for machine outputs; each call returns containers of its own at every depth, `extra`'s
        too (a caller may change them; the estimate and the kept JSON stay as they are)."""
        kept = self.__dict__.get("_kept_json")
        if kept is None:  # frozen: stored beside the fields, past the dataclass's __setattr__
            kept = self.__dict__["_kept_json"] = self._json()
            self.__dict__["_extra_plan"] = copy_plan(self.extra)  # extra is never changed once made
        # the fields' containers are flat (a list of numbers or texts, dicts of numbers): copied in C, ~1 us; a
        # whole copy_json of the kept JSON costs more than building it anew. extra nests: copied by its plan.
        shown = dict(kept)
        shown["breakdown"] = dict(shown["breakdown"])
        shown["budget"] = [dict(term) for term in shown["budget"]]
        shown["notes"] = list(shown["notes"])
        if "compute_buffer_bytes_per_gpu" in shown:
            shown["compute_buffer_bytes_per_gpu"] = list(shown["compute_buffer_bytes_per_gpu"])
        if "extra" in shown:
            shown["extra"] = copy_planned(shown["extra"], self.__dict__["_extra_plan"])
        return shown

    # Built once per estimate: estimates are shared by every spec with the same inputs (engine._estimate) and each
    # memory finding carries its estimate's JSON (10,000 specs: 2,250 GSG033 findings of 2 estimates, issue 34).
    # The fields are frozen, and extra is never changed after the estimate is made.
    def _json(self) -> dict:
        return {
            "engine": self.engine, "backend_version": self.version, "gpus": self.gpus,
            "gpu_memory_bytes": self.gpu_total,
            **({"dtype": self.dtype} if self.dtype else {}),
            **({"kv_cache_dtype": self.kv_cache_dtype} if self.kv_cache_dtype else {}),
            "weights_bytes_per_gpu": self.weights,
            "kv_bytes_per_token_per_gpu": self.kv_bytes_per_token,
            "kv_cache_bytes_per_gpu": self.kv_cache,
            "kv_capacity_tokens": self.kv_capacity_tokens,
            "block_size": self.block_size,
            "max_model_len": self.max_model_len,
            "estimated_max_model_len": self.estimated_max_model_len,
            "max_num_seqs": self.max_num_seqs,
            "max_concurrency": round(self.max_concurrency, 2),
            "kv_bytes_per_max_len_request": self.kv_needed,
            "headroom_needed_bytes": self.headroom_needed,
            "footprint_bytes_per_gpu": self.footprint,
            "verdict": self.verdict,
            **({"compute_buffer_bytes_per_gpu": list(self.compute_buffer_per_gpu)}
               if self.compute_buffer_per_gpu else {}),
            "breakdown": self.breakdown(),
            "budget": [term.as_json() for term in budget_terms(self)],
            "notes": list(self.notes),
            **({"extra": self.extra} if self.extra else {}),
        }
