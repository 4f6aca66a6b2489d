"""Start-up stays near the import floor: a command imports only what it uses, and gsg's own modules cost about
what the libraries it needs cost to import (issue 34; docs/performance.md has the figures).

`python -X importtime` runs the quickstart command in a subprocess. Two budgets:
- which of our modules load (exact, whatever the machine's load): no HTTP client, no server adapter, no
  reporter but the one used, no DeepSeek-V4 arithmetic for specs that have none, and at most
  MAX_VALIDATE_MODULES of gpustack_guard's modules;
- how long they take: the CPU time of importing our modules against that of typer, pydantic-core, jinja2 and
  PyYAML, in one fresh process, in the order the run imports them, with every other module the run needs
  imported first (the fastest of CPU_RUNS processes). Wall-clock self-times (-X importtime) moved with the load
  of a parallel suite; CPU time does not. The budget leaves room for noise, not for a round like the seventh's
  (dataclass methods compiled one exec each: 1.53-1.64 before it).
"""

from __future__ import annotations

import compileall
import os
import re
import subprocess
import sys

from support import REPO

QUICKSTART = ["validate", "specs/", "--fleet", "examples/fleet.yaml", "--offline"]
# 79 after issue 34 (the pipeline, three engines, templates, the text reporter); +gpu_arch and more: 86;
# +core.dataclass_repr (seventh round): 87; 85 after the eleventh (ownership -> project_identity, spelling and urls
# on first use); +yaml_fast and yaml_documents (fourteenth round: the loader's fast path and its dispatch): 87;
# +core.pieced (fifteenth round: output passes done once per shared piece of a report): 88;
# +core.memory.quant_support (round 25: GSG053/GSG054, which weights formats a release and a GPU load, run on every
# spec with a quantized checkpoint): 89; the seventeenth round's typer-free validate path: +console,
# +console.quick_validate, +console.process (what every run does around its command, shared with cli.py), -cli: 91
# Round 20 (session 30): +adapters.files.yaml_plain (plain scalars without PyYAML), +adapters.template_limits and
# +adapters.template_engine (the renderer's Jinja2 side, split off so that a warm cache imports neither it nor
# template_sandbox), +core.values (value types without @dataclass's three execs a class): 94 on a cold cache, as
# this test runs it
# Round 21 (session 31): +core.record_engine (pydantic-core's compiled validator without the package's Python half,
# whose core_schema module was ~11 % of a 1,000-spec run), +core.table_row (the version tables' rows without
# typing.NamedTuple's eval a class): 96
MAX_VALIDATE_MODULES = 96
# our modules' import time over the libraries': 1.53-1.64 before the seventh round, 1.33-1.38 after (-X importtime,
# loaded machine); 1.46-1.47 after the ninth, 1.47-1.51 after the tenth round's memory features (docs/performance.md).
# Measured since as CPU time in one process (fastest of CPU_RUNS): 1.40-1.46 on the same tree. Eleventh round (fewer
# classes built by validate): 1.23-1.28 against 1.32-1.36 for the tree before it, side by side on a loaded machine.
MAX_OWN_TO_LIBRARIES = 1.45
LIBRARIES = ("typer", "pydantic_core", "jinja2", "yaml")
# PyYAML: the quickstart's files all take yaml_fast, whose scalars yaml_plain reads (twentieth round)
# pydantic_core: the package (core_schema, typing_extensions); records load its compiled module alone (round 21);
# packaging: core/versions.py is PEP 440 itself (round 21)
NEVER_OFFLINE = ("typer", "yaml", "pydantic_core", "typing_extensions", "packaging", "gpustack_guard.cli", "httpx", "gpustack_guard.adapters.gpustack", "gpustack_guard.core.memory.deepseek_v4", "html",
                 "gpustack_guard.reporters.sarif", "gpustack_guard.reporters.junit", "gpustack_guard.reporters.json")
_ROW = re.compile(r"import time:\s+(\d+) \|\s+\d+ \| *(\S+)")


def import_rows(args: list[str]) -> list[tuple[str, int]]:
    """(module, self-time in microseconds) of every module a `gsg` run imports, in import order."""
    env = {k: v for k, v in os.environ.items() if k not in ("GSG_OUTPUT", "GITHUB_ACTIONS")}
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "gpustack_guard", *args], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    return [(m[2], int(m[1])) for m in map(_ROW.match, result.stderr.splitlines()) if m]


def test_validate_offline_imports_only_what_it_uses():
    compileall.compile_dir(str(REPO / "gpustack_guard"), quiet=1)  # time imports, not compiling our sources
    rows = import_rows(QUICKSTART)
    names = {name for name, _ in rows}
    ours = sorted(n for n in names if n.startswith("gpustack_guard"))
    # (reporters load through importlib.import_module, which -X importtime does not list)
    assert "gpustack_guard.core.pipeline" in ours and "gpustack_guard.core.memory.engines.vllm" in ours
    unexpected = sorted(n for n in names if n.startswith(NEVER_OFFLINE))
    assert unexpected == [], f"validate --offline imported {unexpected}"
    assert len(ours) <= MAX_VALIDATE_MODULES, f"{len(ours)} of our modules: {ours}"

    # CPU time, not -X importtime's wall clock: a parallel suite on a 2-core machine stretched our ~90 small module
    # imports more than the libraries' few large ones (1.47 quiet, 1.59 beside another suite). In a fresh process:
    # every other module the run imports first, untimed; then the libraries' modules, then ours, in the run's order.
    order = [name for name, _ in rows]
    ratio = min(_cpu_ratio(order) for _ in range(CPU_RUNS))
    assert ratio <= MAX_OWN_TO_LIBRARIES, (f"gsg's own imports took {ratio:.2f}x the CPU time of "
                                           f"{', '.join(LIBRARIES)}'s > {MAX_OWN_TO_LIBRARIES}")


# The fastest of nine: single samples on the 2-core machine spread 1.42-1.53 (session 23, twelve samples; the tree
# before it 1.35-1.58), and the fastest of five passed or failed the budget by chance (1.47 in one fresh clone).
CPU_RUNS = 9
_CPU_SCRIPT = """
import importlib, sys, time
order = sys.argv[1].split(",")
libraries = tuple(sys.argv[2].split(","))
def group(name):
    return "own" if name.startswith("gpustack_guard") else "lib" if name.split(".")[0] in libraries else "other"
for name in order:
    if group(name) == "other":
        try:
            importlib.import_module(name)
        except Exception:
            pass
spent = {}
for kind in ("lib", "own"):
    start = time.process_time()
    for name in order:
        if group(name) == kind:
            importlib.import_module(name)
    if kind == "lib":  # the yardstick stays all four, though the quickstart no longer imports typer
        for name in libraries:
            importlib.import_module(name)
    spent[kind] = time.process_time() - start
print(spent["own"] / spent["lib"])
"""


def _cpu_ratio(order: list[str]) -> float:
    result = subprocess.run([sys.executable, "-c", _CPU_SCRIPT, ",".join(order), ",".join(LIBRARIES)], cwd=REPO,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    return float(result.stdout)


def test_llamacpp_arithmetic_loads_only_for_a_llamacpp_spec():
    """vLLM and SGLang specs alone never import llama.cpp's engine module (its tables: ~1.7 ms of every such run,
    tenth round of docs/performance.md); the quickstart, which has a GGUF spec, does."""
    module = "gpustack_guard.core.memory.engines.llamacpp"
    without = {name for name, _ in import_rows(["validate", "specs/llama-8b.yaml", "specs/qwen-32b-sglang.yaml",
                                                "--fleet", "examples/fleet.yaml", "--offline"])}
    assert "gpustack_guard.core.memory.engines.vllm" in without and module not in without
    assert module in {name for name, _ in import_rows(QUICKSTART)}
