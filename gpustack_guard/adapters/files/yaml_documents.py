"""load_documents: every YAML file gsg reads (specs, fleet snapshots, workloads, contexts, project files, rendered
templates), read by yaml_fast when it has the common shape of a spec and composed by yaml_positions otherwise.

Its own module so that yaml_fast can build on yaml_positions' resolver and LocatedDocument without either
importing the other (tests/architecture keeps the import graph acyclic).
"""

from __future__ import annotations

from gpustack_guard.adapters.files import yaml_fast
from gpustack_guard.adapters.files.yaml_positions import MAX_ITEMS, LocatedDocument, load_composed


def load_documents(text: str, *, max_items: int = MAX_ITEMS) -> list[LocatedDocument]:
    """All documents of a YAML stream; empty documents are skipped. Raises YamlSyntaxError, or YamlInputLimit
    (a subclass) for input beyond yaml_positions' limits (`max_items`: per list or mapping; MAX_SPEC_ITEMS for
    specs)."""
    fast = yaml_fast.fast_documents(text, max_items)
    if fast is not None:  # the common shape of a spec, without composing nodes (yaml_fast.py says which)
        return fast
    return load_composed(text, max_items=max_items)
