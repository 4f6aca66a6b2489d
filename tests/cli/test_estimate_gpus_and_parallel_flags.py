"""`gsg estimate --gpus N` against parallel flags that use another count (round 21). Before, --gpus 3 with
--tensor-parallel-size 2 printed an estimate 'on 2 GPU(s)' with exit 0: the stated count was passed over, where
validate says GSG022 for the same deployment. Now it is that GSG022, one line, exit 1."""

from __future__ import annotations

import pytest

ARGS = ("estimate", "-m", "meta-llama/Llama-3.1-8B-Instruct", "--gpu-memory", "24GiB")


def test_gpus_that_the_parallel_flags_contradict_is_gsg022(gsg):
    result = gsg(*ARGS, "--gpus", "3", "--", "--tensor-parallel-size=2")
    assert result.code == 1 and result.out == ""
    assert result.err.strip() == (
        "gsg: error: GSG022 parallel-size: gpu_ids lists 3 GPUs but 1 replica(s) use 2: --tensor-parallel-size 2 x "
        "--pipeline-parallel-size 1 = 2 GPUs per replica. GPUStack does not reject this: it sets gpus_per_replica "
        "to 2 and leaves estimate:cuda:2 idle (--gpus is GPUs per replica)")


@pytest.mark.parametrize(("gpus", "flags", "shown"), [
    (("--gpus", "2"), ("--", "--tensor-parallel-size=2"), "on 2 GPU(s)"),
    ((), ("--", "--tensor-parallel-size=2"), "on 2 GPU(s)"),
    (("--gpus", "2"), (), "on 2 GPU(s)"),
])
def test_agreeing_or_unstated_counts_estimate_as_before(gsg, gpus, flags, shown):
    result = gsg(*ARGS, *gpus, *flags)
    assert result.code == 0 and shown in result.out.splitlines()[0]
