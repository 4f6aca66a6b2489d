"""Count the scrub's passes: the texts secrets._merged_spans is given, in order (one per distinct piece of a
PiecedText scrubbed piece by piece, the whole text otherwise)."""

from __future__ import annotations

import gpustack_guard.core.secrets as secrets_module


def count_scrub_passes(monkeypatch) -> list[str]:
    seen: list[str] = []
    inner = secrets_module._merged_spans

    def counted(text, wanted, shapes):
        seen.append(text)
        return inner(text, wanted, shapes)
    monkeypatch.setattr(secrets_module, "_merged_spans", counted)
    return seen
