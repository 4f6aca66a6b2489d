"""The dtype vLLM and SGLang load weights in (`--dtype`), which an `auto` KV cache follows: pure.

Sources (read for the rule):
- vLLM: vllm/engine/arg_utils.py `--dtype` choices auto, half, float16, bfloat16, float, float32 (v0.4.0 through
  v0.11, then vllm/config/model.py `ModelDType`); vllm/config.py `_get_and_verify_dtype` (v0.4.0-v0.10) and
  vllm/config/model.py `_resolve_auto_dtype` (v0.10-): `auto` keeps a 16-bit checkpoint's dtype and loads a float32
  checkpoint in 16 bits ("FP16 precision for FP32 and FP16 models, BF16 for BF16 models"; Gemma 2 and 3, which
  overflow in float16, in bfloat16). A named dtype replaces the checkpoint's. Unchanged in bytes across releases.
- SGLang: python/sglang/srt/configs/model_config.py `_get_and_verify_dtype`, the same rule and choices.
"""

from __future__ import annotations

SERVED = {"half": "float16", "float16": "float16", "bfloat16": "bfloat16", "float": "float32", "float32": "float32"}
CHOICES = ("auto",) + tuple(SERVED)
BFLOAT16_ONLY = ("Gemma2", "Gemma3")  # architectures whose float32 checkpoints load as bfloat16


def served_dtype(flag: str | None, checkpoint: str | None, architecture: str | None = None) -> str:
    """The dtype the engine loads weights in. ValueError for a value the engine's argument parser refuses."""
    choice = "auto" if flag is None else flag.strip()
    if choice not in CHOICES:  # argparse `choices` compare exactly: 'BF16' or 'fp16' is an error
        raise ValueError(f"the engine accepts {', '.join(CHOICES)}")
    if choice != "auto":
        return SERVED[choice]
    current = checkpoint or "bfloat16"
    if current != "float32":
        return current
    return "bfloat16" if (architecture or "").startswith(BFLOAT16_ONLY) else "float16"
