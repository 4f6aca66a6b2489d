"""gsg catalog: the models whose facts gsg ships (usable offline), and the names that find them."""

from __future__ import annotations

import json

from gpustack_guard.adapters.files.output import out
from gpustack_guard.adapters.model_sources.catalog import catalog_configs, catalog_facts
from gpustack_guard.core.errors import EXIT_OK
from gpustack_guard.core.memory.weights import param_breakdown
from gpustack_guard.core.values import frozen_value
from gpustack_guard.reporters import TableFormat

MATCHING = ("names match ignoring case, the organisation, a leading 'meta-' and -instruct/-it/-chat/-base "
            "suffixes (with a date): meta-llama/Llama-3.1-8B-Instruct finds Llama-3.1-8B")


@frozen_value(eq=True, repr=True)
class CatalogOptions:
    output: TableFormat = TableFormat.TEXT


def _row(key: str, name: str) -> dict:
    facts = catalog_facts(name)
    assert facts is not None  # every catalog entry parses: tests/core/memory checks it
    try:
        params = param_breakdown(facts).total
    except ValueError:
        params = None
    return {"name": name, "key": key, "architecture": facts.architecture, "parameters": params,
            "layers": facts.num_hidden_layers, "max_position_embeddings": facts.max_position_embeddings,
            "quantization": facts.quant_method}


def run(opts: CatalogOptions) -> int:
    rows = [_row(key, name) for key, (name, _) in sorted(catalog_configs().items(), key=lambda kv: kv[1][0])]
    if opts.output is TableFormat.JSON:
        out(json.dumps({"format_version": "1.0", "matching": MATCHING, "models": rows}, indent=2) + "\n")
        return EXIT_OK
    width = max(len(r["name"]) for r in rows)
    lines = [f"{'model':<{width}}  {'parameters':>11}  {'layers':>6}  {'context':>8}  architecture"]
    for r in rows:
        params = f"{r['parameters'] / 1e9:.2f}B" if r["parameters"] else "?"
        lines.append(f"{r['name']:<{width}}  {params:>11}  {r['layers'] or '?':>6}  "
                     f"{r['max_position_embeddings'] or '?':>8}  {r['architecture'] or '?'}")
    lines += ["", f"Names: {MATCHING}."]
    out("\n".join(lines) + "\n")
    return EXIT_OK
