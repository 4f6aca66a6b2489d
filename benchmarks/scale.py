"""Scale: `gsg validate` on 1,000 generated specs and a 500-GPU fleet, against only parsing the same YAML.

Both sides run as fresh processes on the same files; the parse baseline uses PyYAML's fastest loader
(libyaml). Prints the median wall time of each (runs interleaved; this machine is shared), the baseline beside
the ratio, and the same for CPU time (user + system, steadier on a shared machine); targets: <= 1.5 at 1,000
specs x 500 GPUs, <= 1.2 at 10,000 x 5,000 (start-up weighs less there).
A third process, the baseline with typer, pydantic and jinja2 imported first, shows what the dependencies alone
cost and how much of the target is left for gsg's own work beyond the baseline's parse. A fourth, in-process,
prints gsg's CPU per phase (loading, fleet, check and render, placement and estimation, rules, the rest).
The peer row: check-jsonschema (PyPI) with gsg's own JSON Schema (`gsg schema`) on the same spec files, schema
only and no arithmetic, against gsg's full validation; printed, not judged.

    python benchmarks/scale.py [--specs 1000] [--gpus 500] [--runs 5] [--check-jsonschema PATH]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import ROOT, byte_compile_gsg, median_runs, median_runs_cpu, versus_line

TARGET = 1.5  # 1,000 specs x 500 GPUs, and any tree below 10,000 specs
TARGET_AT_10000 = 1.2  # 10,000 specs x 5,000 GPUs and above: per-spec cost alone, start-up amortised
MODELS = ["Qwen/Qwen2.5-0.5B-Instruct", "Qwen/Qwen2.5-1.5B-Instruct", "Qwen/Qwen3-1.7B", "meta-llama/Llama-3.2-1B",
          "meta-llama/Llama-3.2-3B", "Qwen/Qwen2.5-3B-Instruct", "google/gemma-3-1b-it", "Qwen/Qwen3-4B"]


def write_fleet(path: Path, gpus: int) -> list[str]:
    workers = gpus // 4
    lines = ["format_version: 1", "clusters:", "  - name: big", "    workers:"]
    ids = []
    for w in range(workers):
        lines += [f"      - name: node-{w:03d}", f"        labels: {{rack: r{w % 10}}}", "        gpus:"]
        for g in range(4):
            lines.append(f"          - {{index: {g}, name: NVIDIA L40S, memory: {{total: 46068MiB}}}}")
            ids.append(f"node-{w:03d}:cuda:{g}")
    path.write_text("\n".join(lines) + "\n")
    return ids


def spec_text(i: int, gpu_id: str) -> str:
    model = MODELS[i % len(MODELS)]
    if i % 10 == 9:  # a tenth run on SGLang
        return (f"name: svc-{i:04d}\nsource: huggingface\nhuggingface_repo_id: {model}\n"
                f"gpu_selector:\n  gpu_ids: [{gpu_id}]\nbackend: SGLang\nbackend_version: 0.5.5\n"
                "backend_parameters:\n  - --mem-fraction-static=0.4\n  - --context-length=8192\n"
                "  - --chunked-prefill-size=2048\n")
    template = "guard:\n  template: vllm-hardened\n  vars: {gpu_memory_utilization: 0.4, max_num_seqs: 16}\n" \
        if i % 2 else ""
    args = "" if i % 2 else "backend_parameters:\n  - --gpu-memory-utilization=0.4\n  - --max-model-len=8192\n" \
                            "  - --max-num-seqs=16\n"
    return (f"# generated spec {i}\nname: svc-{i:04d}\nsource: huggingface\nhuggingface_repo_id: {model}\n"
            f"replicas: 1\ncategories: [llm]\ngpu_selector:\n  gpu_ids: [{gpu_id}]\nbackend: vLLM\n"
            f"backend_version: 0.11.0\n{args}{template}")


def write_tree(base: Path, specs: int, gpus: int) -> tuple[Path, list[str]]:
    """The benchmark's fleet (base/fleet.yaml) and its spec folder (base/specs, two specs per GPU); the GPU ids."""
    ids = write_fleet(base / "fleet.yaml", gpus)
    folder = base / "specs"
    folder.mkdir()
    for i in range(specs):
        (folder / f"svc-{i:04d}.yaml").write_text(spec_text(i, ids[(i // 2) % len(ids)]))
    return folder, ids


def cold_median(validate: list[str], base: Path, runs: int) -> float:
    """Median wall time of validate on an empty cache (a fresh GSG_CACHE_DIR each run): Jinja2 imported, the
    template compiled, analysed and rendered, the cache written, as on a CI runner that keeps no cache."""
    times = []
    for run in range(runs):
        env = {**os.environ, "GSG_CACHE_DIR": str(base / f"cold-cache-{run}")}
        start = time.perf_counter()
        subprocess.run(validate, cwd=ROOT, env=env, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def target_for(specs: int) -> float:
    return TARGET_AT_10000 if specs >= 10_000 else TARGET


def check_jsonschema_command(given: str | None) -> str | None:
    """The check-jsonschema executable: as given, beside this Python, or on PATH; None when not installed."""
    if given:
        return given
    beside = os.path.join(os.path.dirname(sys.executable), "check-jsonschema")
    return beside if os.path.exists(beside) else shutil.which("check-jsonschema")


# In a child process: CPU per phase of one validate run, so a change shows where it landed (load, fleet, the
# stages, rules, what is left: report and exit) beside the whole-process ratio.
PHASES = """
import io, sys, time
from gpustack_guard import cli
import gpustack_guard.commands.validate as V
import gpustack_guard.core.pipeline as P
spent = {}
def timed(module, name):
    inner = getattr(module, name)
    def run(*args, **kwargs):
        start = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[name] = spent.get(name, 0.0) + time.process_time() - start
    setattr(module, name, run)
for module, name in ((V, "load_specs"), (V, "load_fleet"), (P, "render_all"), (P, "evaluate"), (P, "run_rules")):
    timed(module, name)
# As the gsg process does (cli.entry): the specs, fleet and report are kept to the process's end, not freed one
# by one when the command returns; freeing them in-process was ~100 of "the rest"'s ~230 ms at 10,000 specs,
# time the gsg process never spends (docs/performance.md, eighth round).
from gpustack_guard import wiring
wiring.leave_without_teardown()
shown, sys.stdout = sys.stdout, io.StringIO()
start = time.process_time()
cli.main(["validate", sys.argv[1], "--fleet", sys.argv[2], "--offline"])
total = time.process_time() - start
sys.stdout = shown
spent["report and the rest"] = total - sum(spent.values())
kept = ", results kept to the end as gsg keeps them" if wiring._KEPT_UNTIL_EXIT else ""
print(", ".join(f"{name} {seconds * 1000:.0f}" for name, seconds in spent.items()) + f" (of {total * 1000:.0f}{kept})")
"""


def phase_line(specs: Path, fleet: Path) -> str:
    result = subprocess.run([sys.executable, "-c", PHASES, str(specs), str(fleet)], cwd=ROOT, capture_output=True,
                            text=True, check=False)
    said = result.stdout.strip() or f"(no figures: exit {result.returncode})"
    return f"  in-process phases, ms CPU of one run: {said}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--specs", type=int, default=1000)
    parser.add_argument("--gpus", type=int, default=500)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--check-jsonschema", metavar="PATH", help="check-jsonschema executable for the peer row "
                                                                   "(default: beside this Python, else on PATH)")
    opts = parser.parse_args()
    target = target_for(opts.specs)
    peer = check_jsonschema_command(opts.check_jsonschema)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        specs, ids = write_tree(base, opts.specs, opts.gpus)
        parse_only = [sys.executable, "-c",
                      "import sys, yaml, pathlib\n"
                      "files = sorted(pathlib.Path(sys.argv[1]).glob('*.yaml')) + [pathlib.Path(sys.argv[2])]\n"
                      "for f in files: list(yaml.load_all(f.read_text(), Loader=yaml.CSafeLoader))",
                      str(specs), str(base / "fleet.yaml")]
        # the floor of any implementation on gsg's stack: its four libraries imported, then the same parse
        floor = [sys.executable, "-c", "import typer, pydantic, jinja2\n" + parse_only[2], *parse_only[3:]]
        validate = [sys.executable, "-m", "gpustack_guard", "validate", str(specs), "--fleet",
                    str(base / "fleet.yaml"), "--offline"]
        byte_compile_gsg()
        median_runs([validate], 1)  # warm caches (templates, page cache)
        (parse_time, parse_cpu, _), (validate_time, validate_cpu, result), (floor_time, floor_cpu, _) = \
            median_runs_cpu([parse_only, validate, floor], opts.runs)
        cold = cold_median(validate, base, opts.runs)
        phases = phase_line(specs, base / "fleet.yaml")
        peer_line = "peer: check-jsonschema not installed (pip install check-jsonschema; it needs PyPI), row skipped"
        if peer:
            schema = base / "spec.schema.json"
            schema.write_text(subprocess.run([sys.executable, "-m", "gpustack_guard", "schema"], cwd=ROOT,
                                             capture_output=True, text=True, check=True).stdout)
            files = sorted(str(f) for f in specs.glob("*.yaml"))
            check = [peer, "--schemafile", str(schema), *files]
            median_runs([check], 1)
            (peer_time, peer_result), (full_time, _) = median_runs([check, validate], max(3, opts.runs // 2))
            said = (peer_result.stdout.strip().splitlines() or ["(nothing)"])[-1]
            peer_line = (f"peer: check-jsonschema with gsg's JSON Schema (schema only, {len(files)} files): "
                         f"{peer_time:6.2f} s vs gsg's full validation {full_time:6.2f} s: gsg "
                         f"{peer_time / full_time:.1f}x faster (check-jsonschema said: {said})")
    summary = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "(no summary)"
    print(f"{opts.specs} specs, {opts.gpus} GPUs; gsg says: {summary}")
    print(versus_line(f"gsg validate (median of {opts.runs})", validate_time, "parse only (PyYAML + libyaml)",
                      parse_time, target))
    print(versus_line(f"  CPU time (median of {opts.runs})", validate_cpu, "parse only", parse_cpu, target))
    print(f"  first run on an empty cache (median of {opts.runs}): {cold * 1000:7.1f} ms, ratio "
          f"{cold / parse_time:.2f} (reported, not judged: the runs above validate a tree validated before, with "
          "its compiled templates and renderings kept in GSG_CACHE_DIR)")
    imports = floor_cpu - parse_cpu
    print(f"  imports of typer, pydantic and jinja2 alone: {imports * 1000:.0f} ms CPU (baseline + imports "
          f"{floor_cpu / parse_cpu:.2f}); the target leaves {(target * parse_cpu - floor_cpu) * 1000:.0f} ms "
          f"beyond the baseline's own parse, gsg spends {(validate_cpu - floor_cpu) * 1000:.0f} ms there")
    print(phases)
    print(peer_line)
    return 0 if validate_time / parse_time <= target and result.returncode in (0, 1) else 1


if __name__ == "__main__":
    raise SystemExit(main())
