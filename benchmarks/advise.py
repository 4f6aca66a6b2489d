"""Advise: `gsg advise` of 4 workloads on the 500-GPU fleet of benchmarks/scale.py, against one `gsg validate`
of that benchmark's 1,000 specs on the same fleet.

Every advised candidate runs the validate pipeline on the whole fleet, so this measures how many candidates
the search judges and what each costs. Both sides run as fresh processes. Prints both wall times and the
ratio; target: ratio <= 3.

    python benchmarks/advise.py [--specs 1000] [--gpus 500] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from scale import write_tree
from timing import best_runs, byte_compile_gsg, ratio_line

TARGET = 3.0
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
# Four shapes of traffic one team might send to one 8B: chat, retrieval-augmented answers, code completion in
# bursts and a nightly batch of long documents.
WORKLOADS = [
    {"name": "chat", "prompt_tokens": {"p50": 400, "p95": 1500, "p99": 2500},
     "output_tokens": {"p50": 200, "p95": 600, "p99": 1000}, "concurrency": 48, "pattern": "steady"},
    {"name": "rag", "prompt_tokens": {"p50": 4000, "p95": 7000, "p99": 9000},
     "output_tokens": {"p50": 300, "p95": 800, "p99": 1200}, "concurrency": 16, "pattern": "steady"},
    {"name": "completion", "prompt_tokens": {"p50": 1500, "p95": 3000, "p99": 4000},
     "output_tokens": {"p50": 30, "p95": 120, "p99": 200}, "concurrency": 32, "pattern": "burst"},
    {"name": "nightly", "prompt_tokens": {"p50": 20000, "p95": 28000, "p99": 30000},
     "output_tokens": {"p50": 600, "p95": 1000, "p99": 1500}, "concurrency": 4, "pattern": "batch"},
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--specs", type=int, default=1000)
    parser.add_argument("--gpus", type=int, default=500)
    parser.add_argument("--runs", type=int, default=5)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        specs, ids = write_tree(base, opts.specs, opts.gpus)
        files = []
        for w in WORKLOADS:
            path = base / f"{w['name']}.yaml"
            path.write_text(json.dumps(w))  # JSON is YAML
            files += ["--workload", str(path)]
        validate = [sys.executable, "-m", "gpustack_guard", "validate", str(specs), "--fleet",
                    str(base / "fleet.yaml"), "--offline"]
        advise = [sys.executable, "-m", "gpustack_guard", "advise", "--model", MODEL, "--fleet",
                  str(base / "fleet.yaml"), "--gpus", ",".join(ids[:4]), *files, "--offline", "--output", "json"]
        byte_compile_gsg()
        best_runs([validate, advise], 1)  # warm caches (templates, page cache)
        (validate_time, checked), (advise_time, result) = best_runs([validate, advise], opts.runs)
    summary = checked.stderr.strip().splitlines()[-1] if checked.stderr.strip() else "(no summary)"
    try:
        decision = json.loads(result.stdout)["decision"]
    except (ValueError, KeyError):
        print(f"gsg advise failed: {result.stderr.strip()[-500:]}")
        return 1
    ratio = advise_time / validate_time
    print(f"4 workloads on {opts.gpus} GPUs ({MODEL} on 4 of them); gsg advise decides: {decision}")
    print(f"gsg validate ({opts.specs} specs): {validate_time:6.2f} s (best of {opts.runs}); it says: {summary}")
    print(f"gsg advise (4 workloads):     {advise_time:6.2f} s (best of {opts.runs})")
    print(ratio_line(ratio, TARGET))
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
