"""gsg advise tunes a candidate that vLLM's sampler warm-up (GSG043) would kill at start-up, as it tunes one that
GPUStack would not admit: the warm-up runs after the KV cache, so a lower fraction (or fewer sequences) lets it
fit. It used to drop such a candidate untuned, and with every candidate dropped, refuse to advise at all."""

import json

import pytest
import yaml

from gpustack_guard.core.advise.sizing import MIN_FRACTION, _warmup_limits


def _advise(gsg, tmp_path, model: str, concurrency: int) -> tuple[int, dict | str]:
    workload = tmp_path / "many.yaml"
    workload.write_text(yaml.safe_dump({"name": "many", "prompt_tokens": {"p50": 100, "p95": 100, "p99": 100},
                                        "output_tokens": {"p50": 50, "p95": 50, "p99": 50},
                                        "concurrency": concurrency, "pattern": "steady"}))
    result = gsg("advise", "-o", "json", "-m", model, "--gpus", "1", "--gpu-memory", "24GiB",
                 "--backend-version", "0.29.0", "-w", str(workload))
    return result.code, (json.loads(result.out)["options"][0]["deployments"][0] if result.code == 0 else result.err)


@pytest.mark.parametrize("model, fraction, seqs, kv_dtype", [
    # at 0.90 and 8,192 sequences the warm-up of 4,096 rows does not fit in what the pool leaves: 0.83 leaves it room
    # (the derived forward peak is smaller than the calibrated one, so the pool takes more at each fraction)
    ("Qwen/Qwen3-0.6B", "0.83", 2113, "fp8"),
    # the fix says 0.79; gemma's pool shrinks as its sequences grow, and the most seats that passed are kept; 0.29
    # prints its capacity as concurrency x length (kv_cache_utils.py@v0.21.0): a 160-token request holds 10 pages
    # in the full group and 11 in each of the 6 window groups, so fewer seats than blocks // 7 x 16 suggested
    ("google/gemma-3-1b-it", "0.79", 4392, "fp8"),
])
def test_a_candidate_the_sampler_warm_up_would_kill_is_tuned_not_dropped(gsg, tmp_path, model, fraction, seqs,
                                                                        kv_dtype):
    code, deployment = _advise(gsg, tmp_path, model, 8192)
    assert code == 0, deployment
    assert isinstance(deployment, dict)
    assert deployment["backend_parameters"][:3] == [f"--gpu-memory-utilization={fraction}", "--max-model-len=160",
                                                    f"--max-num-seqs={seqs}"]
    assert (deployment["kv_cache_dtype"], deployment["verdict"], deployment["validate"]) == (kv_dtype, "fits", [])
    assert deployment["estimate"]["extra"]["sampler_warmup_fix"] == {}  # the warm-up fits as advised


def test_a_peak_whose_warm_up_fits_is_advised_as_before(gsg, tmp_path):
    code, deployment = _advise(gsg, tmp_path, "Qwen/Qwen3-0.6B", 2048)  # the near miss: no GSG043 on the way
    assert code == 0 and isinstance(deployment, dict)
    assert deployment["backend_parameters"][:3] == ["--gpu-memory-utilization=0.93", "--max-model-len=160",
                                                    "--max-num-seqs=2048"]


def test_the_warm_up_fix_lowers_the_fraction_when_advise_may_use_it_else_the_sequences():
    assert _warmup_limits({"gpu_memory_utilization": 0.79, "max_num_seqs": 967}, 0.95, 8192) == (0.79, 8192)
    assert _warmup_limits({"gpu_memory_utilization": 0.85, "max_num_seqs": 967}, 0.80, 8192) == (0.80, 8192)
    below = round(MIN_FRACTION - 0.01, 2)
    assert _warmup_limits({"gpu_memory_utilization": below, "max_num_seqs": 967}, 0.95, 8192) == (0.95, 967)
    assert _warmup_limits({"gpu_memory_utilization": 0.0, "max_num_seqs": 0}, 0.95, 8192) == (0.95, 0)
    assert _warmup_limits({}, 0.95, 600) == (0.95, 0)  # no fix given: nothing to try
