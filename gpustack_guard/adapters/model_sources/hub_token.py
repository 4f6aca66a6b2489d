"""Which Hugging Face token gsg sends, found where huggingface_hub looks: $HF_TOKEN (or the legacy
$HUGGING_FACE_HUB_TOKEN), then the file $HF_TOKEN_PATH, then <HF_HOME>/token (what `huggingface-cli login`
writes). The value is never printed: wiring registers it with the output scrubber.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from gpustack_guard.adapters.files.regular_file import MAX_KEY_FILE_BYTES, read_text_file
from gpustack_guard.adapters.model_sources.hub_cache import expand_path, hf_home
from gpustack_guard.core.values import frozen_value


def token_path(environ: Mapping[str, str] = os.environ) -> Path:
    explicit = environ.get("HF_TOKEN_PATH")
    return expand_path(explicit) if explicit else hf_home(environ) / "token"


def _clean(token: str | None) -> str | None:
    """Line breaks and surrounding blanks removed (a token file usually ends in a newline); empty is none."""
    return (token or "").replace("\r", "").replace("\n", "").strip() or None


@frozen_value(eq=True)
class HubToken:
    """The Hugging Face token gsg found, and whether it came from a file (then it is registered as a secret)."""

    value: str
    from_file: bool  # an env value is masked by the env rule already; one from a file must be registered

    def __repr__(self) -> str:  # never the value, not even in a traceback or a debugger
        return f"HubToken(from_file={self.from_file})"


def hub_token(environ: Mapping[str, str] = os.environ) -> HubToken | None:
    from_env = _clean(environ.get("HF_TOKEN") or environ.get("HUGGING_FACE_HUB_TOKEN"))
    if from_env:
        return HubToken(from_env, from_file=False)
    try:
        from_file = _clean(read_text_file(token_path(environ), MAX_KEY_FILE_BYTES))
    except ValueError:  # no file, unreadable, not a regular file, too large, or not text: no token
        return None
    return HubToken(from_file, from_file=True) if from_file else None
