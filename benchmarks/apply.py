"""Apply throughput: 200 deployments in 4 waves to the in-memory GPUStack with 50 ms latency per request
(the round trip: half before the fake handles a request, half after, as on a network).

Prints the wall time of the apply phase (plan already made) against the critical path, waves x round trips per
create x per-call latency: each wave's creates are independent and can overlap, waves cannot, and each create is
two round trips in a row (the POST, then the exact-name lookup that reads it back and would show a duplicate; a
write is never taken on its answer alone, issue 31). Target: ratio <= 1.5.

    python benchmarks/apply.py [--deployments 200] [--waves 4] [--latency 0.05] [--concurrency 64] [--runs 3]
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the in-memory GPUStack lives with the tests

from support.fake_gpustack import FakeGPUStack  # noqa: E402
from timing import ratio_line  # noqa: E402

TARGET = 1.5
ROUND_TRIPS = 2  # per create, in sequence: POST /v2/models, then GET /v2/models?search=<name> (the read-back)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--deployments", type=int, default=200)
    parser.add_argument("--waves", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--runs", type=int, default=3)
    opts = parser.parse_args()

    from gpustack_guard.adapters.gpustack.applier import Applier, ordered_groups
    from gpustack_guard.adapters.gpustack.client import GPUStackClient
    from gpustack_guard.core.deploy.plan import plan
    from gpustack_guard.wiring import Connection, SpecSources, load_desired

    fake = FakeGPUStack.field_notes()
    cid = fake.clusters[0]["id"]
    for n in range(opts.deployments // 4):  # room for everyone: 4 GPUs per node, gmu 0.2 each
        fake.add_worker(cid, f"bench-{n:03d}", [("NVIDIA L40S", 46068 * 1024**2)] * 4)
    with tempfile.TemporaryDirectory() as tmp:
        specs = Path(tmp) / "specs"
        specs.mkdir()
        for i in range(opts.deployments):
            (specs / f"d{i:03d}.yaml").write_text(
                f"name: d{i:03d}\nsource: huggingface\nhuggingface_repo_id: Qwen/Qwen2.5-0.5B-Instruct\n"
                f"gpu_selector: {{gpu_ids: [bench-{i // 4:03d}:cuda:{i % 4}]}}\nbackend: vLLM\n"
                "backend_version: 0.11.0\nbackend_parameters: [--gpu-memory-utilization=0.2, --max-model-len=8192,"
                f" --max-num-seqs=8]\nguard: {{wave: {i % opts.waves}}}\n")
        client = GPUStackClient("http://gpustack.test", fake.api_key, transport=fake.transport())
        connection = Connection(client, "v2.3.0")
        state = load_desired(connection, SpecSources((str(specs),), offline=True))
        errors = [f for f in state.report.findings if f.severity.value == "error"]
        if errors:
            raise SystemExit(f"bench specs do not validate: {errors[0].message}")
        changes = plan(state.rendered, state.live_models, state.cluster_names)
        waves = len(ordered_groups(changes))
        fake.latency = opts.latency
        gc.disable()  # as the gsg CLI runs
        wall, server = float("inf"), 0.0
        for _ in range(opts.runs):  # the best run: noise from other processes only ever adds
            fake.models.clear()
            fake.instances.clear()
            fake.server_seconds = 0.0
            applier = Applier(client, state.cluster_ids, concurrency=opts.concurrency)
            start = time.perf_counter()
            outcome = applier.run(changes)
            elapsed = time.perf_counter() - start
            if not outcome.ok or len(fake.models) != opts.deployments:
                raise SystemExit(f"apply failed: {outcome.failed[:3]}")
            if elapsed < wall:
                wall, server = elapsed, fake.server_seconds
    critical = waves * ROUND_TRIPS * opts.latency
    ratio = wall / critical
    own = (wall - server) / critical
    print(f"{opts.deployments} deployments in {waves} waves, {opts.latency * 1000:.0f} ms per request, "
          f"concurrency {opts.concurrency}")
    print(f"critical path (waves x {ROUND_TRIPS} round trips x latency): {critical:.2f} s")
    print(f"apply wall time:                  {wall:.2f} s (best of {opts.runs})")
    print(f"  of which the fake server's CPU: {server:.2f} s (in-process here; a real server's own machine)")
    print(ratio_line(ratio, TARGET))
    print(f"ratio without the fake's CPU: {own:.2f}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
