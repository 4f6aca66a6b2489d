"""The arguments GPUStack 2.3's worker adds, per backend and GPU layout, exactly (docs/gpustack-injected-arguments.md)."""

import pytest

from gpustack_guard.core.deploy.injection import assign_replicas, gpus_per_replica, injected_arguments, per_worker

TAIL = ["--host=<worker ip>", "--port=<assigned port>", "--served-model-name=m"]


def args(family, flags, workers, **kw):
    return [a.render() for a in injected_arguments(family, flags, workers, name="m", **kw).arguments]


@pytest.mark.parametrize("workers,parallel", [
    ((1,), []),
    ((2,), ["--tensor-parallel-size=2"]),
    ((4,), ["--tensor-parallel-size=4"]),
    ((2, 2), ["--tensor-parallel-size=2", "--pipeline-parallel-size=2"]),  # Ray: TP = leader's GPUs, PP = workers
    ((4, 2), ["--tensor-parallel-size=1", "--pipeline-parallel-size=6"]),  # uneven: PP over every GPU
])
def test_vllm_parallel_sizes_follow_the_chosen_gpus(workers, parallel):
    ray = ["--distributed-executor-backend=ray"] if len(workers) > 1 else []
    assert args("vllm", {}, workers, version="0.11.0") == parallel + ["--enable-prompt-tokens-details"] + ray + TAIL


def test_a_parallel_size_the_spec_sets_wins():
    for flags in ({"tensor-parallel-size": "2"}, {"pipeline-parallel-size": "4"}, {"data-parallel-size": "4"}):
        assert args("vllm", flags, (4,), version="0.11.0") == ["--enable-prompt-tokens-details"] + TAIL
    injection = injected_arguments("vllm", {"tensor-parallel-size": "2"}, (4,), name="m")
    assert injection.flags() == {}


def test_vllm_version_gated_arguments_and_the_length_cap():
    assert args("vllm", {}, (1,), version="0.9.0") == TAIL
    assert args("vllm", {}, (1,), version="0.16.0", native_max_len=131072) == [
        "--max-model-len=8192", "--disable-access-log-for-endpoints=/metrics", "--enable-prompt-tokens-details"
    ] + TAIL
    assert args("vllm", {"max-model-len": "4096", "port": "1", "host": "h"}, (1,), version="0.9.0",
                native_max_len=131072) == ["--served-model-name=m"]
    assert args("vllm", {}, (1,), version="0.9.0", native_max_len=8192) == TAIL  # not above the cap


def test_vllm_mp_multi_node_derives_tp_from_the_gcd_and_data_parallel():
    flags = {"distributed-executor-backend": "mp"}
    assert args("vllm", flags, (4, 2), version="0.11.0")[:3] == [
        "--tensor-parallel-size=2", "--data-parallel-size=3", "--data-parallel-size-local=2"]
    # a pinned image defaults to MP; cross-node TP needs equal GPU counts
    injection = injected_arguments("vllm", {"tensor-parallel-size": "8"}, (4, 2), name="m", image_name="my/vllm")
    assert injection.refusal == "cross-node TP/PP (8 GPUs per rank) needs workers with equal GPU counts, got [4, 2]"
    assert injected_arguments("vllm", {"tensor-parallel-size": "8"}, (4, 4), name="m",
                              image_name="my/vllm").refusal is None


def test_sglang():
    assert args("sglang", {}, (2,), version="0.5.5", fraction=0.83) == [
        "--tp-size=2", "--enable-metrics", "--enable-cache-report", "--mem-fraction-static=0.83"] + TAIL
    assert args("sglang", {"tp-size": "2", "mem-fraction-static": "0.7"}, (2, 2), version="0.5.8.post1",
                env={"GPUSTACK_DISABLE_METRICS": "1"}, native_max_len=32768) == [
        "--context-length=8192", "--uvicorn-access-log-exclude-prefixes=/metrics", "--enable-cache-report",
        "--nnodes=2", "--node-rank=0", "--dist-init-addr=<leader ip>:<port>"] + TAIL


def test_other_backends_get_nothing():
    assert args("llamacpp", {}, (2,)) == [] and args("other", {}, (2,)) == []


def test_gpus_per_replica_as_the_scheduler_sets_it():
    assert gpus_per_replica(2, 1, 1, None, False) == 2
    assert gpus_per_replica(3, 1, 1, None, False) == 2  # the largest power of two
    assert gpus_per_replica(6, 1, 1, None, False) == 4
    assert gpus_per_replica(3, 1, 2, None, False) == 2  # the world size when set
    assert gpus_per_replica(3, 1, 2, None, True) == 3  # GPUSTACK_SKIP_GPU_COUNT_CHECK
    assert gpus_per_replica(4, 2, 1, None, False) == 2
    assert gpus_per_replica(4, 0, 1, None, False) == 4
    assert gpus_per_replica(4, 1, 2, 1, False) == 1  # an explicit value stands


def test_replicas_take_one_worker_when_they_can():
    ids = ["a:cuda:0", "b:cuda:0", "a:cuda:1", "b:cuda:1"]
    assert assign_replicas(ids, 2, 2) == [["a:cuda:0", "a:cuda:1"], ["b:cuda:0", "b:cuda:1"]]
    assert assign_replicas(ids, 4, 1) == [["a:cuda:0", "a:cuda:1", "b:cuda:0", "b:cuda:1"]]
    assert assign_replicas(["a:cuda:0", "b:cuda:0", "b:cuda:1"], 3, 1) == [["b:cuda:0", "b:cuda:1", "a:cuda:0"]]
    assert assign_replicas(ids, 4, 2) is None
    assert per_worker(["a:cuda:0", "b:cuda:0", "b:cuda:1"]) == (2, 1)


@pytest.mark.parametrize("family,fraction", [("vllm", None), ("sglang", 0.83)])
@pytest.mark.parametrize("moving", ["latest", "main", "nightly"])
def test_a_moving_backend_version_injects_what_no_version_does(family, fraction, moving):
    # the same release the memory arithmetic assumes (profiles.arithmetic_version), not "older than every floor"
    kw = {"fraction": fraction} if fraction else {}
    assert args(family, {}, (1,), version=moving, native_max_len=131072, **kw) == \
        args(family, {}, (1,), version=None, native_max_len=131072, **kw)
    assert args(family, {}, (1,), version=None, native_max_len=131072, **kw) != \
        args(family, {}, (1,), version="0.1.0", native_max_len=131072, **kw)


@pytest.mark.parametrize("family,source", [("vllm", "gpustack/worker/backends/vllm.py _build_command_args"),
                                           ("sglang", "gpustack/worker/backends/sglang.py _build_command_args")])
@pytest.mark.parametrize("given", [(), ("host",), ("port",), ("served-model-name",), ("host", "port"),
                                   ("host", "served-model-name"), ("port", "served-model-name"),
                                   ("host", "port", "served-model-name")], ids=lambda g: "+".join(g) or "none")
def test_the_tail_is_what_the_spec_leaves_unset_in_gpustack_order(family, source, given):
    # host and port records are kept per family (issue 34); each spec still gets its own served-model-name
    flags = {key: "x" for key in given}
    for name in ("first", "second"):
        tail = [(a.key, a.value, a.why, a.source) for a in
                injected_arguments(family, flags, (1,), name=name, version="0.1.0").arguments
                if a.key in ("host", "port", "served-model-name")]
        wanted = [(key, value, "always, unless the spec sets it", source) for key, value in
                  (("host", "<worker ip>"), ("port", "<assigned port>"), ("served-model-name", name))
                  if key not in given]
        assert tail == wanted
