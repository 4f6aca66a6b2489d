"""The built-in model catalog: config.json documents shipped as package data (data/catalog.json).

Reading the file is I/O, so it lives here at the edge; the facts it yields come from the pure
`memory.hfconfig.facts_from_config`.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from gpustack_guard.core.memory.facts import ModelFacts
from gpustack_guard.core.memory.hfconfig import facts_from_config

CATALOG_FILE = Path(__file__).resolve().parents[2] / "data" / "catalog.json"


def catalog_key(name: str) -> str:
    """Catalog matching ignores case, the org, and instruct/chat suffixes."""
    base = name.strip().lower().split("/")[-1]
    base = re.sub(r"^meta-(?=llama)", "", base)
    return re.sub(r"-(instruct|it|chat|base)(?=-|$)(-\d{4})?", "", base)


@lru_cache(maxsize=1)
def catalog_configs() -> dict[str, tuple[str, dict]]:
    """catalog key -> (published repo id, config.json dictionary)."""
    data = json.loads(CATALOG_FILE.read_text(encoding="utf-8"))
    return {catalog_key(name): (name, config) for name, config in data["models"].items()}


@lru_cache(maxsize=256)
def catalog_facts(name: str) -> ModelFacts | None:
    hit = catalog_configs().get(catalog_key(name))
    if hit is None:
        return None
    return facts_from_config(hit[1], f"catalog:{hit[0]}")
