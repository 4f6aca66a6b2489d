"""The built-in model catalog: config.json documents shipped as package data (data/catalog.json).

Reading the file is I/O, so it lives here at the edge; the facts it yields come from the pure
`memory.hfconfig.facts_from_config`.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.memory.hfconfig import facts_from_config

CATALOG_FILE = Path(__file__).resolve().parents[2] / "data" / "catalog.json"


def catalog_key(name: str) -> str:
    """Catalog matching ignores case, the org, and instruct/chat suffixes (a release date stays: see release_of)."""
    base = name.strip().lower().split("/")[-1]
    base = re.sub(r"^meta-(?=llama)", "", base)
    return re.sub(r"-(instruct|it|chat|base)(?=-|$)", "", base)


_RELEASE = re.compile(r"-(\d{4})$")  # Qwen3-30B-A3B-Instruct-2507, Mistral-Large-Instruct-2411


def release_of(key: str) -> tuple[str, str | None]:
    """(the key without a trailing release date, the date)."""
    match = _RELEASE.search(key)
    return (key[:match.start()], match.group(1)) if match else (key, None)


@lru_cache(maxsize=1)
def catalog_configs() -> dict[str, tuple[str, dict]]:
    """catalog key -> (published repo id, config.json dictionary)."""
    data = json.loads(CATALOG_FILE.read_text(encoding="utf-8"))
    return {catalog_key(name): (name, config) for name, config in data["models"].items()}


@lru_cache(maxsize=256)
def catalog_facts(name: str) -> ModelFacts | None:
    """The entry of this name; for a dated release the catalog lacks (Qwen3-30B-A3B-Instruct-2507), the undated
    entry's shape without its length: a later release keeps the architecture but often not the context
    (40,960 -> 262,144 there), so the length must come from --max-model-len or guard.model."""
    key = catalog_key(name)
    hit = catalog_configs().get(key)
    if hit is not None:
        return facts_from_config(hit[1], f"catalog:{hit[0]}")
    undated, release = release_of(key)
    hit = catalog_configs().get(undated) if release else None
    if hit is None:
        return None
    facts = facts_from_config(hit[1], f"catalog:{hit[0]} (shape only: release {release} is not in the catalog)")
    return replace(facts, length_config=None, max_position_embeddings=None)
