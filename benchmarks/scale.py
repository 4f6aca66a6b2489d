"""Scale: `gsg validate` on 1,000 generated specs and a 500-GPU fleet, against only parsing the same YAML.

Both sides run as fresh processes on the same files; the parse baseline uses PyYAML's fastest loader
(libyaml). Prints both wall times and the ratio; target: ratio <= 3.

    python benchmarks/scale.py [--specs 1000] [--gpus 500] [--runs 5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from timing import best_runs, byte_compile_gsg, ratio_line

TARGET = 3.0
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--specs", type=int, default=1000)
    parser.add_argument("--gpus", type=int, default=500)
    parser.add_argument("--runs", type=int, default=5)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        specs, ids = write_tree(base, opts.specs, opts.gpus)
        parse_only = [sys.executable, "-c",
                      "import sys, yaml, pathlib\n"
                      "files = sorted(pathlib.Path(sys.argv[1]).glob('*.yaml')) + [pathlib.Path(sys.argv[2])]\n"
                      "for f in files: list(yaml.load_all(f.read_text(), Loader=yaml.CSafeLoader))",
                      str(specs), str(base / "fleet.yaml")]
        validate = [sys.executable, "-m", "gpustack_guard", "validate", str(specs), "--fleet",
                    str(base / "fleet.yaml"), "--offline"]
        byte_compile_gsg()
        best_runs([validate], 1)  # warm caches (templates, page cache)
        (parse_time, _), (validate_time, result) = best_runs([parse_only, validate], opts.runs)
    summary = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "(no summary)"
    ratio = validate_time / parse_time
    print(f"{opts.specs} specs, {opts.gpus} GPUs; gsg says: {summary}")
    print(f"parse only (PyYAML + libyaml): {parse_time:6.2f} s (best of {opts.runs})")
    print(f"gsg validate:                  {validate_time:6.2f} s (best of {opts.runs})")
    print(ratio_line(ratio, TARGET))
    return 0 if ratio <= TARGET and result.returncode in (0, 1) else 1


if __name__ == "__main__":
    raise SystemExit(main())
